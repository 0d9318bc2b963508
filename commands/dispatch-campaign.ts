import type { Client } from '@temporalio/client';
import {
  type CampaignDispatchInfo,
  findCampaignDispatchInfo,
  recordDispatch,
} from '../db/campaigns.js';
import type { Sql } from '../db/client.js';
import { startCampaignWorkflow } from '../temporal/workflow-starts.js';
import { campaignWorkflowId } from '../workflows/definitions.js';

/** How long a dispatch waits for Temporal to confirm the workflow start before giving up. */
export const DISPATCH_CONFIRM_MS = 5000;

/**
 * Starts (or finds) a saved campaign's workflow and marks the campaign queued: the REST send's
 * and `herald campaign create`'s last step. `confirmed` is false when Temporal could not confirm
 * by `confirmBy` (epoch ms); the campaign then stays as it was (paused) until a retry resumes it.
 */
export async function dispatchCampaign(
  deps: { sql: Sql; temporal: Client },
  campaign: { workspaceId: number; campaignId: number; key: string | null },
  confirmBy = Date.now() + DISPATCH_CONFIRM_MS,
  /** What the start needs, when the caller has just read it. */
  known?: CampaignDispatchInfo,
): Promise<{ confirmed: boolean; info: CampaignDispatchInfo }> {
  const { workspaceId, campaignId, key } = campaign;
  const info = known ?? (await findCampaignDispatchInfo(deps.sql, campaignId));
  const confirmed = await startCampaignWorkflow(
    deps.temporal,
    { workspaceId, campaignId, key, ...info },
    confirmBy,
  );
  if (confirmed) {
    await recordDispatch(deps.sql, campaignId, campaignWorkflowId(workspaceId, key, campaignId));
  }
  return { confirmed, info };
}
