import type { Client } from '@temporalio/client';
import { CAMPAIGN_CANCELED_SIGNAL } from '../workflows/definitions.js';
import { withinDeadline } from './deadline.js';

/**
 * Tells a campaign's run that its campaign was canceled, by `deadline` (epoch ms) at the latest.
 * Best effort: the cancel is already committed, and a run that is not told finds nothing left to
 * claim, or (scheduled) reads the cancel when its time comes. False when Temporal did not confirm.
 */
export async function signalCampaignCanceled(
  temporal: Client,
  workflowId: string,
  deadline: number,
): Promise<boolean> {
  try {
    await withinDeadline(temporal, deadline, () =>
      temporal.workflow.getHandle(workflowId).signal(CAMPAIGN_CANCELED_SIGNAL),
    );
    return true;
  } catch {
    return false;
  }
}
