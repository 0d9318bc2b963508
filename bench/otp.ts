/**
 * `npm run bench:otp`: OTP send and verify latency against a zero-latency simulator, and in the
 * same run two floors: a bare authenticated route doing one indexed Postgres read, and Temporal's
 * own bare Update-with-Start on the same server. What the fraud guard costs, in alternating
 * rounds on the same stack: OTP send at concurrency 32 with the guard at its defaults and with it
 * off, and the floor route with the API rate limits on and off. Prints JSON. BENCH_SHAPE and
 * BENCH_WORKERS choose the shape.
 */
import { cpus } from 'node:os';
import { operatorActor } from '../cli/context.js';
import { type GuardSetInput, setGuard } from '../commands/fraud-guard/settings.js';
import { requestJson } from '../providers/json-http.js';
import { measureTemporalFloor } from './floor/measure.js';
import { cpuByPart, cpuPerRequest } from './support/cpu.js';
import {
  type AlternatingSummary,
  measureAlternating,
  measureLatency,
  round,
} from './support/measure.js';
import { type BenchStack, LIFTED_API_RATES, log, startBenchStack } from './support/stack.js';

const SEQUENTIAL_SENDS = 200;
const CONCURRENT_SENDS = 640;
const CONCURRENCY = 32;
/** Guard on and off alternate (A B B A …) in this many rounds each, to cancel drift. */
const ROUNDS = 8;
const FLOOR_REQUESTS = 3_200;

/**
 * Every send its own number range, as real sign-ins spread over many: the guard's range is the
 * number without its last 4 digits, so a send counts toward no other's breaker. `+6140` to
 * `+6143` are mobile prefixes with any 7 digits after: 4,000 ranges of `+614` and 4 digits, each
 * taking its next number (last 4 digits) once 4,000 are used.
 */
const recipient = (index: number) =>
  `+614${String(index % 4_000).padStart(4, '0')}${String(Math.floor(index / 4_000)).padStart(4, '0')}`;
/** Where each phase's recipients start: no two sends share a range. */
const FIRST = { warmUp: 0, sequential: 100, guardOn: 400, guardOff: 1_100, floor: 3_999 };

/** The guard at its defaults: nothing set, every value inherited. */
const GUARD_DEFAULTS: GuardSetInput = {
  otpPerRecipient: 'inherit',
  rangeBreaker: 'inherit',
  blockPrefix: 'inherit',
  keyRate: 'inherit',
  workspaceRate: 'inherit',
};
const GUARD_OFF: GuardSetInput = {
  otpPerRecipient: 'off',
  rangeBreaker: 'off',
  blockPrefix: 'none',
  keyRate: 'off',
  workspaceRate: 'off',
};
/** API rate limits on, at a rate no run reaches: the buckets' cost without a refusal. */
const RATES_ON_NEVER_REFUSING: GuardSetInput = { keyRate: '100000/s', workspaceRate: '100000/s' };

const guardAt = (stack: BenchStack, settings: GuardSetInput) =>
  setGuard({ sql: stack.sql }, { workspace: stack.workspace, ...settings }, operatorActor()).then(
    () => undefined,
  );

interface Answer {
  status: number;
  body: { data?: { status?: string; request_id?: string; message?: { id: number } } };
}

/** A lean client (providers/json-http.ts), so the client's own cost weighs little in the ratios. */
async function call(
  stack: BenchStack,
  method: 'GET' | 'POST',
  path: string,
  body?: object,
): Promise<Answer> {
  const answer = await requestJson(new URL(path, stack.apiUrl), {
    method,
    headers: {
      authorization: `Bearer ${stack.token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    timeoutMs: 60_000,
  });
  return { status: answer.status, body: answer.body as Answer['body'] };
}

/** Answers by OTP status: `pending` is a correct answer when the system is saturated. */
const outcomes: Record<string, number> = {};

async function sendOtp(stack: BenchStack, index: number): Promise<string | undefined> {
  const { status, body } = await call(stack, 'POST', '/api/v1/otp/send', {
    recipient: recipient(index),
    purpose: 'login',
  });
  if (status !== 202 || !body.data?.status)
    throw new Error(`OTP send answered ${status}: ${JSON.stringify(body)}`);
  outcomes[body.data.status] = (outcomes[body.data.status] ?? 0) + 1;
  return body.data.status === 'accepted' ? body.data.request_id : undefined;
}

/** The code the simulator's phone received, as a user would read it. */
async function codeSentTo(stack: BenchStack, index: number): Promise<string> {
  const response = await fetch(
    `${stack.simulatorUrl}/v1/inbox?to=${encodeURIComponent(recipient(index))}`,
  );
  const { messages } = (await response.json()) as { messages: { body: string }[] };
  const code = /\d{6}/.exec(messages[0]?.body ?? '')?.[0];
  if (!code) throw new Error(`no code in the inbox of ${recipient(index)}`);
  return code;
}

async function main() {
  const stack = await startBenchStack();
  try {
    await fetch(`${stack.simulatorUrl}/v1/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ latency_ms: 0, receipt: { outcome: 'none' } }),
    });
    await stack.sql`update workspaces set credit_balance = 10000000`;
    const floorCampaign = await call(stack, 'POST', '/api/v1/messages', {
      recipients: [recipient(FIRST.floor)],
      message: 'Floor',
    });
    const floorPath = `/api/v1/messages/${floorCampaign.body.data?.message?.id}`;

    log('warming up');
    for (let i = 0; i < 50; i++) await sendOtp(stack, FIRST.warmUp + i);

    log(`send latency at concurrency 1 (${SEQUENTIAL_SENDS})`);
    const sendSequential = await measureLatency(SEQUENTIAL_SENDS, 1, async (i) => {
      await sendOtp(stack, FIRST.sequential + i);
    });
    log(
      `send latency at concurrency ${CONCURRENCY}, guard at its defaults and off (${ROUNDS} rounds of ${CONCURRENT_SENDS / ROUNDS} each)`,
    );
    const accepted: { index: number; requestId: string }[] = [];
    const concurrentSend = (first: number) => async (i: number) => {
      // sendOtp throws on any answer but 202: the guard at its defaults refuses none of them.
      const requestId = await sendOtp(stack, first + i);
      if (requestId) accepted.push({ index: first + i, requestId });
    };
    const guard = await measureAlternating(
      [
        {
          name: 'on',
          enter: () => guardAt(stack, GUARD_DEFAULTS),
          request: concurrentSend(FIRST.guardOn),
        },
        {
          name: 'off',
          enter: () => guardAt(stack, GUARD_OFF),
          request: concurrentSend(FIRST.guardOff),
        },
      ],
      {
        rounds: ROUNDS,
        perRound: CONCURRENT_SENDS / ROUNDS,
        concurrency: CONCURRENCY,
        cpu: () => cpuByPart(stack.dataDir),
      },
    );
    const { on: guardOn, off: guardOff } = guard as Record<'on' | 'off', AlternatingSummary>;
    const { cpu_ms_per_request: sendCpu, rounds: _, ...sendConcurrent } = guardOn;
    const guardRatio = round(guardOn.requests_per_s / guardOff.requests_per_s, 2);
    await guardAt(stack, LIFTED_API_RATES);
    // As many verifies as before the guard's rounds doubled the sends.
    const toVerify = accepted.slice(0, CONCURRENT_SENDS);
    const codes = await Promise.all(toVerify.map(({ index }) => codeSentTo(stack, index)));

    log(`verify latency at concurrency ${CONCURRENCY}`);
    const cpuBeforeVerify = cpuByPart(stack.dataDir);
    const verify = await measureLatency(toVerify.length, CONCURRENCY, async (i) => {
      const { index, requestId } = toVerify[i] as { index: number; requestId: string };
      const { status, body } = await call(stack, 'POST', '/api/v1/otp/verify', {
        recipient: recipient(index),
        code: codes[i],
        request_id: requestId,
      });
      if (status !== 200) throw new Error(`verify answered ${status}: ${JSON.stringify(body)}`);
    });
    const verifyCpu = cpuPerRequest(cpuBeforeVerify, cpuByPart(stack.dataDir), toVerify.length);
    log(
      `floor latency at concurrency ${CONCURRENCY}, API rate limits on and off (${ROUNDS} rounds of ${FLOOR_REQUESTS / ROUNDS} each)`,
    );
    const floorRoute = async () => {
      const { status } = await call(stack, 'GET', floorPath);
      if (status !== 200) throw new Error(`floor route answered ${status}`);
    };
    const rates = (await measureAlternating(
      [
        { name: 'on', enter: () => guardAt(stack, RATES_ON_NEVER_REFUSING), request: floorRoute },
        { name: 'off', enter: () => guardAt(stack, LIFTED_API_RATES), request: floorRoute },
      ],
      {
        rounds: ROUNDS,
        perRound: FLOOR_REQUESTS / ROUNDS,
        concurrency: CONCURRENCY,
        cpu: () => cpuByPart(stack.dataDir),
      },
    )) as Record<'on' | 'off', AlternatingSummary>;
    await guardAt(stack, LIFTED_API_RATES);
    // The floor is the route as the other figures meet it: the rate limits lifted.
    const { cpu_ms_per_request: floorCpu, rounds: __, ...floor } = rates.off;
    const rateLimitRatio = round(rates.on.requests_per_s / rates.off.requests_per_s, 2);
    log("Temporal's floor on the same server");
    const temporalFloor = await measureTemporalFloor(
      stack.temporalAddress,
      'default',
      stack.dataDir,
    );
    const bareUpdate = temporalFloor.update_with_start;
    const sendOverFloor = round(
      sendConcurrent.requests_per_s / bareUpdate.concurrency_32.requests_per_s,
      2,
    );
    const p50OverFloor = round(sendSequential.p50_ms / bareUpdate.concurrency_1.p50_ms, 2);
    const verifyOverFloor = round(verify.requests_per_s / floor.requests_per_s, 2);

    const result = {
      benchmark: 'otp',
      shape: stack.shape,
      workers: stack.workers,
      machine: { cpus: cpus().length, node: process.version },
      setup: `${stack.setup}; simulator at 0 ms latency`,
      send: {
        concurrency_1: sendSequential,
        [`concurrency_${CONCURRENCY}`]: sendConcurrent,
        answers_by_status: outcomes,
      },
      // Where the CPU of a request at concurrency 32 went, by process (ms per request).
      cpu_ms_per_request: { send: sendCpu, verify: verifyCpu, floor_route: floorCpu },
      verify: { [`concurrency_${CONCURRENCY}`]: verify },
      floor: {
        route: 'GET /api/v1/messages/{id}: API key lookup + one indexed read',
        [`concurrency_${CONCURRENCY}`]: floor,
      },
      temporal_floor: temporalFloor,
      // The guard's cost: each pair measured in alternating rounds, A B B A …, on this stack.
      guard: {
        otp_send: {
          on: { ...guardOn, settings: 'the defaults (nothing set)' },
          off: {
            ...guardOff,
            settings:
              'otp_per_recipient off, range_breaker off, key_rate off, workspace_rate off, block_prefix none',
          },
        },
        floor_route: {
          rate_limits_on: { ...rates.on, settings: 'key_rate and workspace_rate 100000/s' },
          rate_limits_off: { ...rates.off, settings: 'key_rate and workspace_rate off' },
        },
      },
      ratios: {
        otp_send_c32_guard_ratio: guardRatio,
        floor_route_c32_rate_limit_ratio: rateLimitRatio,
        send_c32_over_update_with_start_floor_c32: sendOverFloor,
        send_c1_p50_over_update_with_start_floor_c1_p50: p50OverFloor,
        verify_c32_over_floor_route_c32: verifyOverFloor,
      },
      aims: {
        send_c32_at_least_200_per_s: sendConcurrent.requests_per_s >= 200,
        send_c32_at_least_0_5x_update_with_start_floor: sendOverFloor >= 0.5,
        send_c1_p50_at_most_1_5x_update_with_start_floor: p50OverFloor <= 1.5,
        verify_at_least_0_8x_floor_route: verifyOverFloor >= 0.8,
        send_c32_guard_on_at_least_0_95x_off: guardRatio >= 0.95,
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stack.close();
  }
}

await main();
