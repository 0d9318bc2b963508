import { cancelCampaign as cancelSavedCampaign } from '../../db/campaign-lifecycle.js';
import { type CampaignView, findCampaignView } from '../../db/campaigns.js';
import { HeraldError } from '../../domain/errors.js';
import { signalCampaignCanceled } from '../../temporal/campaign-signals.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';

/** How long a cancel waits for Temporal to take its signal; the cancel holds without it. */
const SIGNAL_WAIT_MS = 2_000;

/**
 * Cancels a campaign of the workspace: REST's POST /messages/{id}/cancel, the console's Cancel
 * and `herald campaign cancel`. Postgres decides (db/campaign-lifecycle.ts): from its commit no
 * message of the campaign is claimed for a submission; at most the ones already claimed (a
 * chunk's batch in each of its lanes) still reach a provider. Then the run is told, so it stops
 * waiting or taking chunks. A second cancel answers as the first. Returns the campaign as it
 * stands after the cancel. The cancel's audit line (what it canceled, and the claimed messages
 * still settling) is written in its transaction.
 */
export async function cancelCampaign(
  /** `temporal` null: the run is not told (a CLI that could not reach Temporal). */
  deps: Pick<CommandDeps, 'sql'> & { temporal: CommandDeps['temporal'] | null },
  actor: Actor,
  workspaceId: number,
  campaignId: number,
): Promise<{ campaign: CampaignView; alreadyCanceled: boolean }> {
  // Written with the cancel; a second cancel changes nothing, so it writes no line.
  const outcome = await cancelSavedCampaign(deps.sql, workspaceId, campaignId, (tx, counts) =>
    writeAudit(tx, actor, workspaceId, {
      action: 'campaign.canceled',
      target: `campaign #${campaignId}`,
      details: { ...counts },
    }),
  );
  if (outcome.kind === 'not_found')
    throw new HeraldError('not_found', { message: `Campaign ${campaignId} was not found.` });
  if (outcome.kind === 'completed')
    throw new HeraldError('conflict', {
      message: `Campaign ${campaignId} has already completed and cannot be canceled.`,
    });
  // Again on a repeated cancel: the first one's signal may not have landed.
  if (outcome.workflowId && deps.temporal)
    await signalCampaignCanceled(deps.temporal, outcome.workflowId, Date.now() + SIGNAL_WAIT_MS);
  const campaign = await findCampaignView(deps.sql, workspaceId, campaignId);
  if (!campaign) throw new Error(`campaign ${campaignId} vanished`);
  return { campaign, alreadyCanceled: outcome.alreadyCanceled };
}
