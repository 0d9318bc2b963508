/**
 * `npm run bench:metrics`: what Herald's metrics cost. The SMS benchmark's sustained load (20
 * concurrent campaigns of 1,000) on a stack without metrics, and on one whose every process serves
 * /metrics (the Temporal SDK's worker metrics included), each target scraped every second by the
 * bench as Prometheus scrapes it. Prometheus itself is not run here: on this machine's two cores
 * its own CPU would be counted as Herald's (bench:sms runs under a real one). Stacks alternate
 * (off, on, off, on…) so drift in the machine weighs on both; the aim is the medians' ratio at
 * least 0.95. Prints JSON.
 */
import { cpus } from 'node:os';
import { sendCampaigns, simulatorBehaviour } from './support/campaigns.js';
import { median, round } from './support/measure.js';
import { log, startBenchStack } from './support/stack.js';

const SUSTAINED_CAMPAIGNS = 20;
const ROUNDS = 3;
const RUNS_PER_STACK = 2;
/** Prometheus's scrape, as compose's is but 15 times as often. */
const SCRAPE_INTERVAL_MS = 1_000;
/** A fresh stack's processes (and Prometheus) settle before the first timed run. */
const SETTLE_MS = 5_000;

async function sustainedRuns(metrics: boolean) {
  const stack = await startBenchStack({ metrics });
  const scraper = metrics ? scrapeEverySecond(stack.metricsTargets) : undefined;
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await simulatorBehaviour(stack, 'none');
    await sendCampaigns(stack, 1);
    const runs = [];
    for (let run = 0; run < RUNS_PER_STACK; run++) {
      log(`metrics ${metrics ? 'on' : 'off'}: ${SUSTAINED_CAMPAIGNS} concurrent campaigns`);
      runs.push(await sendCampaigns(stack, SUSTAINED_CAMPAIGNS));
    }
    return { runs, scrapes: scraper?.stop() ?? 0 };
  } finally {
    scraper?.stop();
    await stack.close();
  }
}

/** GET /metrics of every target each second, read whole; returns how many answered 200. */
function scrapeEverySecond(targets: string[]) {
  let scrapes = 0;
  const timer = setInterval(() => {
    for (const target of targets)
      fetch(`http://${target}/metrics`)
        .then(async (response) => {
          await response.text();
          if (response.ok) scrapes += 1;
        })
        .catch(() => {});
  }, SCRAPE_INTERVAL_MS);
  return {
    stop() {
      clearInterval(timer);
      return scrapes;
    },
  };
}

const off = [];
const on = [];
let scrapes = 0;
for (let round = 0; round < ROUNDS; round++) {
  off.push(...(await sustainedRuns(false)).runs);
  const withMetrics = await sustainedRuns(true);
  on.push(...withMetrics.runs);
  scrapes += withMetrics.scrapes;
}
const offRate = median(off.map((run) => run.messages_per_s));
const onRate = median(on.map((run) => run.messages_per_s));
const ratio = round(onRate / offRate, 3);
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'metrics',
      machine: { cpus: cpus().length, node: process.version },
      setup: `the sms benchmark's dev stack; ${SUSTAINED_CAMPAIGNS} concurrent campaigns of 1,000, simulator at 0 ms without receipts; ${ROUNDS} rounds of a stack without metrics then one with METRICS_PORT on every process, each target's /metrics read every ${SCRAPE_INTERVAL_MS / 1000} s; ${RUNS_PER_STACK} runs each`,
      metrics_off: { messages_per_s_median: round(offRate), runs: off },
      metrics_on: {
        messages_per_s_median: round(onRate),
        scrapes_answered: scrapes,
        runs: on,
      },
      on_over_off: ratio,
      aims: { metrics_cost_at_most_5_percent: ratio >= 0.95 },
    },
    null,
    2,
  )}\n`,
);
