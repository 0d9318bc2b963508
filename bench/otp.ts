/**
 * `npm run bench:otp`: OTP send and verify latency against a zero-latency simulator, and in the
 * same run two floors: a bare authenticated route doing one indexed Postgres read, and Temporal's
 * own bare Update-with-Start on the same server. Prints JSON. BENCH_SHAPE and BENCH_WORKERS
 * choose the shape.
 */
import { cpus } from 'node:os';
import { requestJson } from '../providers/json-http.js';
import { measureTemporalFloor } from './floor/measure.js';
import { cpuByPart, cpuPerRequest } from './support/cpu.js';
import { measureLatency, round } from './support/measure.js';
import { type BenchStack, log, startBenchStack } from './support/stack.js';

const SEQUENTIAL_SENDS = 200;
const CONCURRENT_SENDS = 640;
const CONCURRENCY = 32;

const recipient = (index: number) => `+6141${String(index).padStart(7, '0')}`;

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
      recipients: [recipient(9_999_999)],
      message: 'Floor',
    });
    const floorPath = `/api/v1/messages/${floorCampaign.body.data?.message?.id}`;

    log('warming up');
    for (let i = 0; i < 50; i++) await sendOtp(stack, 5_000_000 + i);

    log(`send latency at concurrency 1 (${SEQUENTIAL_SENDS})`);
    const sendSequential = await measureLatency(SEQUENTIAL_SENDS, 1, async (i) => {
      await sendOtp(stack, 1_000_000 + i);
    });
    log(`send latency at concurrency ${CONCURRENCY} (${CONCURRENT_SENDS})`);
    const accepted: { index: number; requestId: string }[] = [];
    const cpuBeforeSends = cpuByPart(stack.dataDir);
    const sendConcurrent = await measureLatency(CONCURRENT_SENDS, CONCURRENCY, async (i) => {
      const requestId = await sendOtp(stack, 2_000_000 + i);
      if (requestId) accepted.push({ index: 2_000_000 + i, requestId });
    });
    const sendCpu = cpuPerRequest(cpuBeforeSends, cpuByPart(stack.dataDir), CONCURRENT_SENDS);
    const codes = await Promise.all(accepted.map(({ index }) => codeSentTo(stack, index)));

    log(`verify latency at concurrency ${CONCURRENCY}`);
    const cpuBeforeVerify = cpuByPart(stack.dataDir);
    const verify = await measureLatency(accepted.length, CONCURRENCY, async (i) => {
      const { index, requestId } = accepted[i] as { index: number; requestId: string };
      const { status, body } = await call(stack, 'POST', '/api/v1/otp/verify', {
        recipient: recipient(index),
        code: codes[i],
        request_id: requestId,
      });
      if (status !== 200) throw new Error(`verify answered ${status}: ${JSON.stringify(body)}`);
    });
    const verifyCpu = cpuPerRequest(cpuBeforeVerify, cpuByPart(stack.dataDir), accepted.length);
    log(`floor latency at concurrency ${CONCURRENCY}`);
    const cpuBeforeFloor = cpuByPart(stack.dataDir);
    const floor = await measureLatency(CONCURRENT_SENDS, CONCURRENCY, async () => {
      const { status } = await call(stack, 'GET', floorPath);
      if (status !== 200) throw new Error(`floor route answered ${status}`);
    });

    const floorCpu = cpuPerRequest(cpuBeforeFloor, cpuByPart(stack.dataDir), CONCURRENT_SENDS);
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
      ratios: {
        send_c32_over_update_with_start_floor_c32: sendOverFloor,
        send_c1_p50_over_update_with_start_floor_c1_p50: p50OverFloor,
        verify_c32_over_floor_route_c32: verifyOverFloor,
      },
      aims: {
        send_c32_at_least_200_per_s: sendConcurrent.requests_per_s >= 200,
        send_c32_at_least_0_5x_update_with_start_floor: sendOverFloor >= 0.5,
        send_c1_p50_at_most_1_5x_update_with_start_floor: p50OverFloor <= 1.5,
        verify_at_least_0_8x_floor_route: verifyOverFloor >= 0.8,
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stack.close();
  }
}

await main();
