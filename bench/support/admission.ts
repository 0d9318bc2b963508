import { requestJson } from '../../providers/json-http.js';
import { CAMPAIGN_SIZE, MESSAGE, recipients } from './campaigns.js';
import { percentile, round, runConcurrently } from './measure.js';
import type { BenchStack } from './stack.js';

/**
 * Item 4 of issue 28 (no false `paused`): 1,000-recipient sends at concurrency 64 on one stack
 * while a second stack on the same machine is kept busy. Every answer must be 202 `queued`, or a
 * refusal (503 or 429 with Retry-After) that saved nothing; 202 `paused` only when Temporal is
 * unreachable, which it never is here.
 */

export type SendOutcome =
  | 'queued'
  | 'paused'
  | 'refused_503'
  | 'refused_429'
  | 'refused_without_retry_after'
  | 'other';

export interface ClassifiedAnswer {
  outcome: SendOutcome;
  status: number;
  ms: number;
  /** Seconds, when the answer carried Retry-After. */
  retryAfterS?: number;
}

/** What a well-behaved client does after a refusal: waits as long as Retry-After says. */
const waitOut = async (answer: ClassifiedAnswer) => {
  if (answer.retryAfterS)
    await new Promise((resolve) => setTimeout(resolve, (answer.retryAfterS ?? 0) * 1000));
};

/** One 1,000-recipient send, classified by its answer rather than thrown on. */
export async function classifiedSend(stack: BenchStack): Promise<ClassifiedAnswer> {
  const started = performance.now();
  const answer = await requestJson(new URL('/api/v1/messages', stack.apiUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipients, message: MESSAGE }),
    timeoutMs: 60_000,
  });
  const ms = performance.now() - started;
  const status = (answer.body as { data?: { message?: { status?: string } } }).data?.message
    ?.status;
  const refused = answer.status === 503 || answer.status === 429;
  const outcome: SendOutcome =
    answer.status === 202 && status === 'queued'
      ? 'queued'
      : answer.status === 202 && status === 'paused'
        ? 'paused'
        : refused && !answer.header('retry-after')
          ? 'refused_without_retry_after'
          : answer.status === 503
            ? 'refused_503'
            : answer.status === 429
              ? 'refused_429'
              : 'other';
  const retryAfter = Number(answer.header('retry-after'));
  return { outcome, status: answer.status, ms, ...(retryAfter > 0 && { retryAfterS: retryAfter }) };
}

function tally(answers: ClassifiedAnswer[]) {
  const counts: Record<SendOutcome, number> = {
    queued: 0,
    paused: 0,
    refused_503: 0,
    refused_429: 0,
    refused_without_retry_after: 0,
    other: 0,
  };
  for (const answer of answers) counts[answer.outcome] += 1;
  return counts;
}

/** Keeps `concurrency` 1,000-recipient sends running on `stack` until stopped. */
export function keepBusy(stack: BenchStack, concurrency: number) {
  let stopping = false;
  const answers: ClassifiedAnswer[] = [];
  const lanes = Array.from({ length: concurrency }, async () => {
    while (!stopping) {
      const answer = await classifiedSend(stack).catch(() => ({
        outcome: 'other' as const,
        status: 0,
        ms: 0,
      }));
      answers.push(answer);
      await waitOut(answer);
    }
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(lanes);
      return { sends: answers.length, ...tally(answers) };
    },
  };
}

/**
 * `requests` sends at `concurrency` on `stack` while `loadStack` takes `loadConcurrency` sends at
 * once. Campaigns saved are counted in Postgres: refused sends must have saved none.
 */
export async function sendsUnderLoad(
  stack: BenchStack,
  loadStack: BenchStack,
  options: { requests: number; concurrency: number; loadConcurrency: number },
) {
  const [before] = await stack.sql<{ campaigns: number }[]>`
    select count(*)::int as campaigns from campaigns`;
  const load = keepBusy(loadStack, options.loadConcurrency);
  // The second stack's sends get going before the measured ones start.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const answers: ClassifiedAnswer[] = [];
  const started = performance.now();
  await runConcurrently(options.requests, options.concurrency, async () => {
    const answer = await classifiedSend(stack);
    answers.push(answer);
    await waitOut(answer);
  });
  const seconds = (performance.now() - started) / 1000;
  const loadAnswers = await load.stop();
  const [after] = await stack.sql<{ campaigns: number }[]>`
    select count(*)::int as campaigns from campaigns`;
  const counts = tally(answers);
  const accepted = answers.filter((answer) => answer.status === 202).map((answer) => answer.ms);
  const refused = answers.filter((answer) => answer.status !== 202).map((answer) => answer.ms);
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  return {
    recipients_per_send: CAMPAIGN_SIZE,
    requests: options.requests,
    concurrency: options.concurrency,
    seconds: round(seconds, 2),
    ...counts,
    campaigns_saved: (after?.campaigns ?? 0) - (before?.campaigns ?? 0),
    accepted_p50_ms: round(percentile(sorted(accepted), 50)),
    accepted_p99_ms: round(percentile(sorted(accepted), 99)),
    refused_p50_ms: round(percentile(sorted(refused), 50)),
    accepted_per_s: round(accepted.length / seconds),
    clients: 'each lane waits out Retry-After after a refusal, then sends again',
    second_stack_load: { concurrency: options.loadConcurrency, ...loadAnswers },
  };
}
