import type { DeliverySummary } from './tools/get-delivery-summary.js';

/** Bounds the memory of one api process; the entry stored longest ago is dropped first. */
const MAX_ENTRIES = 1_000;

/**
 * Per-process reuse of a workspace's delivery summary (docs/spec.md §4.5 rule 3). A reused summary is
 * returned unchanged: its generated_at, from and to describe the original calculation.
 */
export interface DeliverySummaryCache {
  /** The summary of `workspaceId` over `days`: reused while younger than the TTL, else computed. */
  reuseOrCompute(
    workspaceId: number,
    days: number,
    now: Date,
    compute: () => Promise<DeliverySummary>,
  ): Promise<DeliverySummary>;
}

/** `ttlSeconds` 0 disables reuse: every call computes. */
export function createDeliverySummaryCache(ttlSeconds: number): DeliverySummaryCache {
  const ttlMs = ttlSeconds * 1000;
  // The promise is kept, so concurrent calls for one workspace share one calculation.
  const entries = new Map<string, { computedAt: number; summary: Promise<DeliverySummary> }>();
  return {
    reuseOrCompute(workspaceId, days, now, compute) {
      if (ttlMs <= 0) return compute();
      const key = `${workspaceId}:${days}`;
      const entry = entries.get(key);
      const age = entry ? now.getTime() - entry.computedAt : Number.POSITIVE_INFINITY;
      if (entry && age >= 0 && age < ttlMs) return entry.summary;

      entries.delete(key);
      if (entries.size >= MAX_ENTRIES) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      const summary = compute();
      entries.set(key, { computedAt: now.getTime(), summary });
      // A failed calculation is not reused.
      summary.catch(() => {
        if (entries.get(key)?.summary === summary) entries.delete(key);
      });
      return summary;
    },
  };
}
