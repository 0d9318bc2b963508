import { type Answer, call, type Tenant } from './api.js';
import { rememberInboxSecrets } from './secrets.js';
import { sleep } from './timing.js';

/**
 * The SMS-pumping drill's two clients on one API key (a customer's backend sends for every
 * visitor): an attacker's numbers and a legitimate user who sends, reads the code at the
 * simulator's phone and verifies it. Ranges are the guard's: the number without its last 4 digits.
 */

/** `+614` and 8 digits is an Australian mobile; its range is `+614` and the next 4 digits. */
export const rangeOf = (number: string) => number.slice(0, -4);

/** The attacked ranges `+6141990` … (4 of them), each number `+614199r` and 4 digits. */
export function attackNumber(range: number, index: number): string {
  return `+614199${range}${String(index).padStart(4, '0')}`;
}

/** Legitimate user `u`, alone in range `+61420uu`. */
export function legitimateNumber(user: number): string {
  return `+61420${String(user).padStart(2, '0')}5555`;
}

/** The guard rule a 429 names, read from its message (commands/fraud-guard/send-checks.ts, api-rate.ts). */
export function refusalRule(answer: Answer): string | undefined {
  if (answer.status !== 429) return undefined;
  const message = String(answer.body?.message ?? '');
  if (message.startsWith('Codes to numbers starting')) return 'range_breaker';
  if (message.startsWith('Too many codes were sent to this recipient')) return 'otp_per_recipient';
  if (message.includes('rate limit of this API key')) return 'key_rate';
  if (message.includes('rate limit of this workspace')) return 'workspace_rate';
  if (message.includes('daily cap')) return 'daily_cap';
  return 'unknown';
}

/** `202 accepted`, `429 range_breaker`, `timeout`: an answer as the drill tallies it. */
export function answerLabel(answer: Answer): string {
  if (answer.status === 202) return `202 ${answer.body?.data?.status ?? '?'}`;
  const rule = refusalRule(answer);
  return rule ? `429 ${rule}` : String(answer.status);
}

/** A rate-limit 429: the key's or workspace's bucket, which a client waits out (Retry-After). */
const throttled = (answer: Answer) =>
  ['key_rate', 'workspace_rate'].includes(refusalRule(answer) ?? '');
/** Worth the same request again: throttled, still processing (409), a 5xx or no answer. */
const retryable = (answer: Answer) =>
  throttled(answer) ||
  typeof answer.status !== 'number' ||
  answer.status === 409 ||
  answer.status >= 500;

export interface LegitimateOutcome {
  number: string;
  /** The answer that ended the send: a 202 with a final status, or the refusal. */
  sendAnswer: string;
  refused: boolean;
  verified: boolean;
  /** Answers retried on the way (rate-limit 429s, 5xx, timeouts), by label. */
  retried: string[];
  /** From the first send until verified (or given up). */
  ms: number;
  failure?: string;
}

/**
 * One visitor signing in, through a backend that does what the contract asks: sends under an
 * Idempotency-Key, waits out rate-limit 429s and retries 409s, 5xx and `pending` with the same key,
 * reads the code at its phone (the simulator's inbox) and verifies it. Any other refusal ends it.
 */
export async function signIn(
  apiUrl: string,
  simulatorUrl: string,
  tenant: Tenant,
  number: string,
  key: string,
  deadlineMs = 120_000,
): Promise<LegitimateOutcome> {
  const started = performance.now();
  const deadline = Date.now() + deadlineMs;
  const retried: string[] = [];
  const outcome = (fields: Partial<LegitimateOutcome> & { sendAnswer: string }) => ({
    number,
    refused: false,
    verified: false,
    retried,
    ms: Math.round(performance.now() - started),
    ...fields,
  });

  let sent: Answer;
  for (;;) {
    sent = await call(apiUrl, 'POST', '/api/v1/otp/send', {
      token: tenant.token,
      key,
      body: { recipient: number, purpose: 'login' },
    });
    const pending = sent.status === 202 && sent.body?.data?.status === 'pending';
    if (!retryable(sent) && !pending) break;
    if (Date.now() > deadline)
      return outcome({ sendAnswer: answerLabel(sent), failure: 'send not final by the deadline' });
    retried.push(answerLabel(sent));
    await sleep(throttled(sent) ? 1000 * Number(sent.retryAfter ?? 1) : 1000);
  }
  if (sent.status !== 202) return outcome({ sendAnswer: answerLabel(sent), refused: true });
  if (sent.body.data.status !== 'accepted')
    return outcome({ sendAnswer: answerLabel(sent), failure: 'the code was not sent' });

  const code = await codeAtPhone(simulatorUrl, number, deadline);
  if (!code) return outcome({ sendAnswer: answerLabel(sent), failure: 'no code at the phone' });
  for (;;) {
    const verify = await call(apiUrl, 'POST', '/api/v1/otp/verify', {
      token: tenant.token,
      body: { recipient: number, code, request_id: sent.body.data.request_id },
    });
    if (verify.status === 200) return outcome({ sendAnswer: answerLabel(sent), verified: true });
    if (!retryable(verify) || Date.now() > deadline)
      return outcome({
        sendAnswer: answerLabel(sent),
        failure: `verify answered ${verify.status}: ${JSON.stringify(verify.body)}`,
      });
    retried.push(`verify ${answerLabel(verify)}`);
    await sleep(throttled(verify) ? 1000 * Number(verify.retryAfter ?? 1) : 1000);
  }
}

/** The code in the newest SMS at `number`, polled until it arrives or the deadline. */
async function codeAtPhone(
  simulatorUrl: string,
  number: string,
  deadline: number,
): Promise<string | undefined> {
  while (Date.now() < deadline) {
    const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(number)}`, {
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    if (response?.ok) {
      const { messages } = (await response.json()) as { messages: { body: string }[] };
      const body = messages[0]?.body;
      if (body) {
        rememberInboxSecrets([body]);
        const code = /(?<!\d)\d{4,8}(?!\d)/.exec(body)?.[0];
        if (code) return code;
      }
    }
    await sleep(200);
  }
  return undefined;
}
