/** Latency statistics and a fixed-concurrency runner for the benchmarks. */
import { cpuPerRequest } from './cpu.js';

export interface LatencySummary {
  requests: number;
  concurrency: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  requests_per_s: number;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function runConcurrently(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    for (let index = next++; index < count; index = next++) await task(index);
  });
  await Promise.all(lanes);
}

/** Times `count` calls of `request` at `concurrency`; `request` throws on a wrong answer. */
export async function measureLatency(
  count: number,
  concurrency: number,
  request: (index: number) => Promise<void>,
): Promise<LatencySummary> {
  const latencies: number[] = [];
  const started = performance.now();
  await runConcurrently(count, concurrency, async (index) => {
    const t0 = performance.now();
    await request(index);
    latencies.push(performance.now() - t0);
  });
  return summarize(latencies, performance.now() - started, concurrency);
}

function summarize(latencies: number[], elapsedMs: number, concurrency: number): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    concurrency,
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.at(-1) ?? Number.NaN),
    requests_per_s: round(sorted.length / (elapsedMs / 1000)),
  };
}

/** One variant of a request in an alternating measurement: `enter` puts the stack in its state. */
export interface Variant {
  name: string;
  enter: () => Promise<void>;
  /** `index` counts this variant's requests from 0 across its rounds. */
  request: (index: number) => Promise<void>;
}

export interface AlternatingSummary extends LatencySummary {
  rounds: number;
  /** CPU ms per request of each part over this variant's rounds (when `cpu` was given). */
  cpu_ms_per_request?: Record<string, number>;
}

/**
 * Two variants of one request timed in alternating rounds, A B B A A B …, on the same stack, so
 * that whatever drifts during the run (other load on the machine, caches and tables warming)
 * weighs on both alike. Each variant's figures cover all its rounds: percentiles over all its
 * requests, throughput as its requests over the sum of its rounds' times. `enter` runs untimed
 * before each round.
 */
export async function measureAlternating(
  variants: [Variant, Variant],
  options: {
    rounds: number;
    perRound: number;
    concurrency: number;
    cpu?: () => Record<string, number>;
  },
): Promise<Record<string, AlternatingSummary>> {
  const seen = variants.map(() => ({
    latencies: [] as number[],
    ms: 0,
    cpu: {} as Record<string, number>,
  }));
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const variant = variants[which] as Variant;
      const totals = seen[which] as (typeof seen)[number];
      await variant.enter();
      const cpuBefore = options.cpu?.();
      const started = performance.now();
      await runConcurrently(options.perRound, options.concurrency, async (i) => {
        const t0 = performance.now();
        await variant.request(round * options.perRound + i);
        totals.latencies.push(performance.now() - t0);
      });
      totals.ms += performance.now() - started;
      if (cpuBefore && options.cpu)
        for (const [part, ms] of Object.entries(options.cpu()))
          totals.cpu[part] = (totals.cpu[part] ?? 0) + ms - (cpuBefore[part] ?? 0);
    }
  }
  return Object.fromEntries(
    variants.map((variant, which) => {
      const totals = seen[which] as (typeof seen)[number];
      const requests = totals.latencies.length;
      const cpu = options.cpu
        ? { cpu_ms_per_request: cpuPerRequest({}, totals.cpu, requests) }
        : {};
      return [
        variant.name,
        {
          ...summarize(totals.latencies, totals.ms, options.concurrency),
          rounds: options.rounds,
          ...cpu,
        },
      ];
    }),
  );
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export { round };
