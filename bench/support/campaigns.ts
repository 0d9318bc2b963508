import { requestJson } from '../../providers/json-http.js';
import { cpuByPart, cpuPerRequest } from './cpu.js';
import { round } from './measure.js';
import type { BenchStack } from './stack.js';

/** The SMS benchmarks' workload: campaigns of up to 1,000 recipients, timed to their completion. */

export const CAMPAIGN_SIZE = 1000;
export const recipients = Array.from(
  { length: CAMPAIGN_SIZE },
  (_, i) => `+6141${String(i).padStart(7, '0')}`,
);
export const MESSAGE = 'Your order has shipped and arrives tomorrow.';

/**
 * One send, as a well-behaved client makes it: a refusal at capacity (docs/api.md "Admission": 503 with
 * Retry-After, nothing saved) is waited out and sent again, its wait counted in the latency.
 */
export async function send(stack: BenchStack, count: number): Promise<{ id: number }> {
  let answer = await postSend(stack, count);
  while (answer.status === 503 && answer.header('retry-after')) {
    await new Promise((resolve) =>
      setTimeout(resolve, Number(answer.header('retry-after')) * 1000),
    );
    answer = await postSend(stack, count);
  }
  const body = answer.body as { data?: { message: { id: number; status: string } } };
  if (answer.status !== 202 || body.data?.message.status !== 'queued')
    throw new Error(`POST /api/v1/messages answered ${answer.status}: ${JSON.stringify(body)}`);
  return { id: body.data.message.id };
}

function postSend(stack: BenchStack, count: number) {
  return requestJson(new URL('/api/v1/messages', stack.apiUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipients: recipients.slice(0, count), message: MESSAGE }),
    timeoutMs: 60_000,
  });
}

/** Waits until every campaign is completed and returns the latest completion time. */
export async function drained(stack: BenchStack, ids?: number[]): Promise<Date> {
  for (;;) {
    const [row] = await stack.sql<{ pending: number; lastCompletedAt: Date | null }[]>`
      select count(*) filter (where status <> 'completed')::int as pending,
             max(completed_at) as last_completed_at
      from campaigns ${ids ? stack.sql`where id = any(${ids})` : stack.sql``}`;
    if (row && row.pending === 0 && row.lastCompletedAt) return row.lastCompletedAt;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function clearInbox(stack: BenchStack): Promise<void> {
  await fetch(`${stack.simulatorUrl}/v1/inbox`, { method: 'DELETE' });
}

/** The simulator at zero latency; no receipts, or every message's `receiptDelayMs` later. */
export async function simulatorBehaviour(
  stack: BenchStack,
  receiptDelayMs: number | 'none',
): Promise<void> {
  await fetch(`${stack.simulatorUrl}/v1/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      latency_ms: 0,
      receipt:
        receiptDelayMs === 'none'
          ? { outcome: 'none' }
          : { outcome: 'delivered', delay_ms: receiptDelayMs },
    }),
  });
}

/** Seconds from the request to the campaigns' completion, and the rate that makes. */
export async function sendCampaigns(stack: BenchStack, campaigns: number) {
  const cpuBefore = cpuByPart(stack.dataDir);
  const started = Date.now();
  const ids = await Promise.all(
    Array.from({ length: campaigns }, async () => (await send(stack, CAMPAIGN_SIZE)).id),
  );
  const seconds = ((await drained(stack, ids)).getTime() - started) / 1000;
  const cpu = cpuPerRequest(cpuBefore, cpuByPart(stack.dataDir), campaigns * CAMPAIGN_SIZE);
  await clearInbox(stack);
  return {
    messages: campaigns * CAMPAIGN_SIZE,
    seconds: round(seconds, 3),
    messages_per_s: round((campaigns * CAMPAIGN_SIZE) / seconds),
    cpu_ms_per_message: cpu,
  };
}
