/**
 * `npm run bench:sms`: Herald's send path against a zero-latency simulator, and in the same run
 * two floors: the same messages submitted straight to the simulator, and Temporal's own bare
 * workflow start on the same server. Prints JSON. BENCH_SHAPE and BENCH_WORKERS choose the shape.
 */
import { cpus } from 'node:os';
import { requestJson } from '../providers/json-http.js';
import { measureTemporalFloor } from './floor/measure.js';
import { sendsUnderLoad } from './support/admission.js';
import {
  CAMPAIGN_SIZE,
  clearInbox,
  drained,
  MESSAGE,
  recipients,
  send,
  sendCampaigns,
  simulatorBehaviour,
} from './support/campaigns.js';
import { cpuByPart, cpuPerRequest } from './support/cpu.js';
import { measureLatency, median, round, runConcurrently } from './support/measure.js';
import { personalizedAcceptLatency } from './support/personalized.js';
import { scrapedByPrometheus } from './support/prometheus.js';
import { type BenchStack, log, startBenchStack } from './support/stack.js';

const SUSTAINED_CAMPAIGNS = 20;
const DRAIN_RUNS = 5;
/** Herald keeps 4 chunks × 50 submissions in flight per campaign; the baseline gets the same. */
const BASELINE_CONCURRENCY = 200;
const LATENCY_PLAN = [
  { recipients: 1, concurrency: 1, requests: 200 },
  { recipients: 1, concurrency: 32, requests: 640 },
  { recipients: CAMPAIGN_SIZE, concurrency: 1, requests: 20 },
  { recipients: CAMPAIGN_SIZE, concurrency: 32, requests: 64 },
];

/**
 * Plain and personalised 1,000-recipient sends in alternating rounds at concurrency 1.
 * BENCH_PERSONALIZED_ROUNDS and BENCH_PERSONALIZED_PER_ROUND shrink it; BENCH_SMS_ONLY=personalized
 * runs only this part (a quick check of it).
 */
const PERSONALIZED_LATENCY = {
  rounds: Number(process.env.BENCH_PERSONALIZED_ROUNDS ?? 4),
  perRound: Number(process.env.BENCH_PERSONALIZED_PER_ROUND ?? 10),
  concurrency: 1,
};
const ONLY_PERSONALIZED = process.env.BENCH_SMS_ONLY === 'personalized';

/**
 * No false `paused` (docs/api.md "Admission"): 1,000-recipient sends at concurrency 64 while a second
 * stack on the same machine takes 1,000-recipient sends at concurrency 32. Every answer is 202
 * `queued` or a refusal with Retry-After that saved nothing; `paused` must be 0.
 * BENCH_SMS_ONLY=admission runs only this step.
 */
const UNDER_LOAD = { requests: 256, concurrency: 64, loadConcurrency: 32 };
const ONLY_ADMISSION = process.env.BENCH_SMS_ONLY === 'admission';

async function admissionUnderLoad(stack: BenchStack) {
  log('1,000-recipient sends at concurrency 64 while a second stack is busy');
  const loadStack = await startBenchStack();
  try {
    await simulatorBehaviour(loadStack, 'none');
    // Last step: the campaigns it saved are left to drain as the stacks close.
    const result = await sendsUnderLoad(stack, loadStack, UNDER_LOAD);
    return { ...result, no_false_paused: result.paused === 0 };
  } finally {
    await loadStack.close();
  }
}

async function acceptLatency(stack: BenchStack) {
  const results = [];
  for (const step of LATENCY_PLAN) {
    log(`202 latency: ${step.recipients} recipient(s) at concurrency ${step.concurrency}`);
    const cpuBefore = cpuByPart(stack.dataDir);
    const summary = await measureLatency(step.requests, step.concurrency, async () => {
      await send(stack, step.recipients);
    });
    const cpu = cpuPerRequest(cpuBefore, cpuByPart(stack.dataDir), step.requests);
    results.push({ recipients: step.recipients, ...summary, cpu_ms_per_request: cpu });
    await drained(stack);
    await clearInbox(stack);
  }
  return results;
}

/** The same messages posted straight to the simulator, as fast as the baseline client can. */
async function baseline(stack: BenchStack, messages: number) {
  const cpuBefore = cpuByPart(stack.dataDir);
  const started = performance.now();
  await runConcurrently(messages, BASELINE_CONCURRENCY, async (index) => {
    // The client Herald's simulator adapter uses, so the baseline is the machine's, not fetch's.
    const answer = await requestJson(new URL('/v1/messages', stack.simulatorUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        to: recipients[index % CAMPAIGN_SIZE],
        body: MESSAGE,
        reference: `baseline-${index}`,
      }),
      timeoutMs: 10_000,
    });
    if (answer.status !== 202) throw new Error(`simulator answered ${answer.status}`);
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuPerRequest(cpuBefore, cpuByPart(stack.dataDir), messages);
  await clearInbox(stack);
  return {
    messages,
    seconds: round(seconds, 3),
    messages_per_s: round(messages / seconds),
    cpu_ms_per_message: cpu,
  };
}

async function main() {
  // Every process serves /metrics, scraped each second by a real Prometheus when one is installed.
  const stack = await startBenchStack({ metrics: true });
  const prometheus = await scrapedByPrometheus(stack);
  try {
    // Zero latency, no receipts: the figures are Herald's own cost per message.
    await simulatorBehaviour(stack, 'none');
    if (ONLY_PERSONALIZED) {
      // One campaign first: the rounds wait for campaigns to drain, which needs one completed.
      log('warming up');
      await sendCampaigns(stack, 1);
      log('202 latency: 1,000 recipients, personalised and plain');
      const personalized = await personalizedAcceptLatency(stack, PERSONALIZED_LATENCY);
      const result = {
        benchmark: 'sms',
        shape: stack.shape,
        personalized_accept_latency_202: personalized,
      };
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    if (ONLY_ADMISSION) {
      log('warming up');
      await sendCampaigns(stack, 1);
      const underLoad = await admissionUnderLoad(stack);
      const result = { benchmark: 'sms', shape: stack.shape, sends_under_load: underLoad };
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    log('warming up');
    await sendCampaigns(stack, 1);
    await baseline(stack, CAMPAIGN_SIZE);

    const accept = await acceptLatency(stack);
    log('202 latency: 1,000 recipients, personalised and plain');
    const personalizedAccept = await personalizedAcceptLatency(stack, PERSONALIZED_LATENCY);
    const drainRuns = [];
    const baselineRuns = [];
    for (let run = 0; run < DRAIN_RUNS; run++) {
      log(`drain run ${run + 1} of ${DRAIN_RUNS}`);
      drainRuns.push(await sendCampaigns(stack, 1));
      baselineRuns.push(await baseline(stack, CAMPAIGN_SIZE));
    }
    log(`${SUSTAINED_CAMPAIGNS} concurrent campaigns`);
    const sustainedStarted = Date.now();
    const sustained = await sendCampaigns(stack, SUSTAINED_CAMPAIGNS);
    const metrics = await prometheus?.report(stack, {
      from: sustainedStarted,
      seconds: sustained.seconds,
    });
    const sustainedBaseline = await baseline(stack, SUSTAINED_CAMPAIGNS * CAMPAIGN_SIZE);
    log("Temporal's floor on the same server");
    const temporalFloor = await measureTemporalFloor(
      stack.temporalAddress,
      'default',
      stack.dataDir,
    );
    const underLoad = await admissionUnderLoad(stack);

    const drainSeconds = median(drainRuns.map((run) => run.seconds));
    const drainRate = CAMPAIGN_SIZE / drainSeconds;
    const baselineRate = median(baselineRuns.map((run) => run.messages_per_s));
    const single32 = accept.find((step) => step.recipients === 1 && step.concurrency === 32);
    const bulk32 = accept.find(
      (step) => step.recipients === CAMPAIGN_SIZE && step.concurrency === 32,
    );
    const startFloor32 = temporalFloor.workflow_start.concurrency_32.requests_per_s;
    const single32OverFloor = round((single32?.requests_per_s ?? 0) / startFloor32, 2);
    const drainFraction = round(drainRate / baselineRate, 2);
    const sustainedFraction = round(sustained.messages_per_s / sustainedBaseline.messages_per_s, 2);
    const result = {
      benchmark: 'sms',
      shape: stack.shape,
      workers: stack.workers,
      machine: { cpus: cpus().length, node: process.version },
      setup: `${stack.setup}; simulator at 0 ms latency without receipts`,
      accept_latency_202: accept,
      personalized_accept_latency_202: personalizedAccept,
      one_recipient_c32_over_workflow_start_floor_c32: single32OverFloor,
      drain_1000: {
        runs_s: drainRuns.map((run) => run.seconds),
        median_s: round(drainSeconds, 3),
        messages_per_s: round(drainRate),
        baseline_messages_per_s: round(baselineRate),
        fraction_of_baseline: drainFraction,
      },
      sustained_20_campaigns: {
        ...sustained,
        baseline_messages_per_s: sustainedBaseline.messages_per_s,
        fraction_of_baseline: sustainedFraction,
      },
      baseline: {
        concurrency: BASELINE_CONCURRENCY,
        drain_1000_runs: baselineRuns,
        sustained: sustainedBaseline,
      },
      temporal_floor: temporalFloor,
      sends_under_load: underLoad,
      prometheus: metrics ?? 'not installed: no Prometheus scraped this run',
      aims: {
        one_recipient_c32_at_least_0_6x_workflow_start_floor: single32OverFloor >= 0.6,
        thousand_recipients_c32_p99_at_most_500_ms: (bulk32?.p99_ms ?? Infinity) <= 500,
        drain_at_least_0_9x_baseline: drainFraction >= 0.9,
        sustained_at_least_0_9x_baseline: sustainedFraction >= 0.9,
        no_paused_answer_under_load: underLoad.no_false_paused,
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await prometheus?.stop();
    await stack.close();
  }
}

await main();
