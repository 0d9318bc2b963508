/**
 * `npm run bench:metrics`: what metrics cost. The SMS benchmark's sustained load (20 concurrent
 * campaigns of 1,000) on a stack without metrics, and on one whose every process serves /metrics,
 * scraped each second by a real Prometheus evaluating Herald's alert rules (when installed).
 * Stacks alternate (off, on, off, on) so drift in the machine weighs on both; the aim is the
 * medians' ratio at least 0.95. Prints JSON.
 */
import { cpus } from 'node:os';
import { sendCampaigns, simulatorBehaviour } from './support/campaigns.js';
import { median, round } from './support/measure.js';
import { scrapedByPrometheus } from './support/prometheus.js';
import { log, startBenchStack } from './support/stack.js';

const SUSTAINED_CAMPAIGNS = 20;
const ROUNDS = 2;
const RUNS_PER_STACK = 2;

async function sustainedRuns(metrics: boolean) {
  const stack = await startBenchStack({ metrics });
  const prometheus = metrics ? await scrapedByPrometheus(stack) : undefined;
  try {
    await simulatorBehaviour(stack, 'none');
    await sendCampaigns(stack, 1);
    const runs = [];
    for (let run = 0; run < RUNS_PER_STACK; run++) {
      log(`metrics ${metrics ? 'on' : 'off'}: ${SUSTAINED_CAMPAIGNS} concurrent campaigns`);
      runs.push(await sendCampaigns(stack, SUSTAINED_CAMPAIGNS));
    }
    return { runs, scraped: prometheus !== undefined };
  } finally {
    await prometheus?.stop();
    await stack.close();
  }
}

const off = [];
const on = [];
let scraped = true;
for (let round = 0; round < ROUNDS; round++) {
  off.push(...(await sustainedRuns(false)).runs);
  const withMetrics = await sustainedRuns(true);
  on.push(...withMetrics.runs);
  scraped &&= withMetrics.scraped;
}
const offRate = median(off.map((run) => run.messages_per_s));
const onRate = median(on.map((run) => run.messages_per_s));
const ratio = round(onRate / offRate, 3);
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'metrics',
      machine: { cpus: cpus().length, node: process.version },
      setup: `the sms benchmark's dev stack; ${SUSTAINED_CAMPAIGNS} concurrent campaigns of 1,000, simulator at 0 ms without receipts; ${ROUNDS} rounds of a stack without metrics then one with METRICS_PORT on every process${scraped ? ', scraped every second by Prometheus with the alert rules' : ' (Prometheus not installed: not scraped)'}, ${RUNS_PER_STACK} runs each`,
      metrics_off: { messages_per_s_median: round(offRate), runs: off },
      metrics_on: {
        messages_per_s_median: round(onRate),
        scraped_by_prometheus: scraped,
        runs: on,
      },
      on_over_off: ratio,
      aims: { metrics_cost_at_most_5_percent: ratio >= 0.95 },
    },
    null,
    2,
  )}\n`,
);
