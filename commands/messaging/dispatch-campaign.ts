import type { Client } from '@temporalio/client';
import {
  type CampaignDispatchInfo,
  findCampaignDispatchInfo,
  recordDispatch,
} from '../../db/campaigns.js';
import type { Sql, TransactionSql } from '../../db/client.js';
import { startCampaignWorkflow } from '../../temporal/workflow-starts.js';
import { campaignWorkflowId } from '../../workflows/definitions.js';

/** How long a dispatch waits for Temporal to confirm the workflow start before giving up. */
export const DISPATCH_CONFIRM_MS = 5000;

/**
 * Starts (or finds) a saved campaign's workflow, under the workflow id saved with it, and marks
 * the campaign queued: the last step of every send, of `campaign resume` and of the dispatch
 * sweeper. `confirmed` is false when Temporal could not confirm by `confirmBy` (epoch ms); the
 * campaign then stays paused, and the sweeper (commands/messaging/dispatch-paused.ts) tries again.
 */
export async function dispatchCampaign(
  deps: { sql: Sql; temporal: Client },
  campaign: { workspaceId: number; campaignId: number },
  confirmBy = Date.now() + DISPATCH_CONFIRM_MS,
  /** What the start needs, when the caller has just read it. */
  known?: CampaignDispatchInfo,
  /** Told as soon as Temporal confirms, before the dispatch is recorded. */
  onConfirmed?: () => void,
  /** Runs in the transaction that records the dispatch (an audit line), given the status it set. */
  alongside?: (tx: TransactionSql, status: string | undefined) => Promise<void>,
): Promise<{ confirmed: boolean; info: CampaignDispatchInfo; workflowId: string }> {
  const { workspaceId, campaignId } = campaign;
  const info = known ?? (await findCampaignDispatchInfo(deps.sql, campaignId));
  // Campaigns saved before workflow ids were saved with them ran under their id.
  const workflowId = info.workflowId ?? campaignWorkflowId(workspaceId, null, campaignId);
  const confirmed = await startCampaignWorkflow(
    deps.temporal,
    { ...info, workspaceId, campaignId, workflowId },
    confirmBy,
  );
  if (confirmed) {
    onConfirmed?.();
    await deps.sql.begin(async (tx) => {
      const status = await recordDispatch(tx, campaignId, workflowId);
      await alongside?.(tx, status);
    });
  }
  return { confirmed, info, workflowId };
}
