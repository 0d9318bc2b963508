/** A batch's report for the console: its counters (reporting tables) and failures by error. */
import { type FailureGroup, failureGroups } from '../db/console-reports.js';
import { findBatch, type ReportBatch } from '../db/reporting.js';
import type { CommandDeps } from './deps.js';

export type { FailureGroup, ReportBatch };

export interface BatchReport {
  batch: ReportBatch;
  awaiting: number;
  deliveryRatePercent: number;
  failures: FailureGroup[];
}

/** Undefined when the workspace has no such batch. */
export async function loadBatchReport(
  deps: Pick<CommandDeps, 'sql'>,
  workspaceId: number,
  batchId: number,
): Promise<BatchReport | undefined> {
  if (!Number.isSafeInteger(batchId) || batchId <= 0) return undefined;
  const batch = await findBatch(deps.sql, workspaceId, batchId);
  if (!batch) return undefined;
  const failures =
    batch.failedToSend + batch.deliveryFailed > 0 ? await failureGroups(deps.sql, batchId) : [];
  return {
    batch,
    awaiting: Math.max(0, batch.sent - batch.delivered - batch.deliveryFailed),
    deliveryRatePercent:
      batch.sent === 0 ? 0 : Math.round((batch.delivered / batch.sent) * 10_000) / 100,
    failures,
  };
}
