import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  type CampaignDispatchInfo,
  findCampaignDispatchInfo,
  recordDispatch,
} from '../db/campaigns.js';
import type { Sql } from '../db/client.js';
import type { campaignWorkflow } from '../workflows/campaign.js';
import { searchAttributes, TASK_QUEUE, workspacePriority } from '../workflows/definitions.js';
import { withinDeadline } from './deadline.js';

/**
 * Starting a campaign's workflow, shared by the REST send and `herald campaign create`: the one
 * place that names the workflow, its search attributes and memo, and records the dispatch.
 */

/** How long a dispatch waits for Temporal to confirm the workflow start before giving up. */
export const DISPATCH_CONFIRM_MS = 5000;

export function campaignWorkflowId(workspaceId: number, key: string | null, campaignId: number) {
  return `campaign/${workspaceId}/${key ?? `id-${campaignId}`}`;
}

/**
 * Starts (or finds) the campaign's workflow and marks the campaign queued; `confirmed` is false
 * when Temporal could not confirm in time, and the campaign then stays as it was (paused).
 */
export async function dispatchCampaign(
  deps: { sql: Sql; temporal: Client },
  workspaceId: number,
  campaignId: number,
  workflowId: string,
  /** Epoch milliseconds by which Temporal must have confirmed (default DISPATCH_CONFIRM_MS from now). */
  confirmBy = Date.now() + DISPATCH_CONFIRM_MS,
): Promise<{ confirmed: boolean; info: CampaignDispatchInfo }> {
  const info = await findCampaignDispatchInfo(deps.sql, campaignId);
  try {
    await withinDeadline(deps.temporal, confirmBy, () =>
      deps.temporal.workflow.start<typeof campaignWorkflow>('campaignWorkflow', {
        workflowId,
        taskQueue: TASK_QUEUE,
        priority: workspacePriority(workspaceId),
        args: [{ campaignId }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: searchAttributes.workspaceId, value: String(workspaceId) },
          { key: searchAttributes.kind, value: 'campaign' },
          { key: searchAttributes.campaignId, value: campaignId },
          { key: searchAttributes.status, value: 'queued' },
        ],
        memo: {
          reference: info.reference,
          purpose: info.purpose,
          recipients: info.requestedRecipients,
        },
        staticSummary: `Campaign ${campaignId}: ${info.requestedRecipients} recipients, ${info.purpose}`,
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) return { confirmed: false, info };
  }
  await recordDispatch(deps.sql, campaignId, workflowId);
  return { confirmed: true, info };
}
