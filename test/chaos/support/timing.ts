import { waitUntil as pollUntil } from '../../support/processes.js';

/** Progress lines, waits and latency figures for the chaos suite. Progress goes to stderr. */

export const log = (line: string) => process.stderr.write(`[chaos] ${line}\n`);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value; a probe that throws counts as not yet. */
export function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<T> {
  return pollUntil(what, probe, { timeoutMs, intervalMs });
}

export const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[index] as number);
}

/** How many of each value. */
export function tally(values: (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}
