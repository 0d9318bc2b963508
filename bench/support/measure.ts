/** Latency statistics and a fixed-concurrency runner for the benchmarks. */

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
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    requests: count,
    concurrency,
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(latencies.at(-1) ?? Number.NaN),
    requests_per_s: round(count / (elapsed / 1000)),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export { round };
