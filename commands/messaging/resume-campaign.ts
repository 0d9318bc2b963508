/** `campaign resume`: a campaign left paused is dispatched, and the resume audited with its record. */
import type { Client } from '@temporalio/client';
import type { Sql } from '../../db/client.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import { dispatchCampaign } from './dispatch-campaign.js';

/**
 * Dispatches the campaign as any send does; once Temporal confirms, its line is written in the
 * transaction that marks it queued or scheduled. Unconfirmed, nothing changed and nothing is
 * recorded: it stays paused for the sweeper (commands/messaging/dispatch-paused.ts).
 */
export async function resumeCampaign(
  deps: { sql: Sql; temporal: Client },
  campaign: { workspaceId: number; campaignId: number },
  actor: Actor,
): ReturnType<typeof dispatchCampaign> {
  return dispatchCampaign(deps, campaign, undefined, undefined, undefined, async (tx, status) => {
    await writeAudit(tx, actor, campaign.workspaceId, {
      action: 'campaign.resumed',
      target: `campaign #${campaign.campaignId}`,
      details: { status: status ?? null },
    });
  });
}
