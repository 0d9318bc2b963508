import type { Client } from '@temporalio/client';
import { findPausedCampaigns } from '../../db/campaigns.js';
import type { Sql } from '../../db/client.js';
import { DISPATCH_CONFIRM_MS, dispatchCampaign } from './dispatch-campaign.js';

/**
 * How long after its save a paused campaign is left to the request that saved it: that request
 * is still confirming its dispatch for at most DISPATCH_CONFIRM_MS.
 */
export const PAUSED_GRACE_S = 10;
/** Campaigns one sweep takes up; the next sweep goes on with the rest. */
const SWEEP_LIMIT = 100;
/** Dispatches in flight at once within a sweep. */
const CONCURRENCY = 10;

/**
 * Dispatches the campaigns left paused (Temporal unreachable when they were saved, or their
 * dispatch unrecorded), whatever door saved them and whether or not they have an
 * Idempotency-Key: each under the workflow id saved with it, so a campaign that a retry, `campaign
 * resume` or another sweeper dispatches at the same time still runs once. Stops after a group of
 * which Temporal confirmed none (it is away: the rest would wait too); one campaign it refuses
 * never holds back those after it. Returns what it did.
 */
export async function dispatchPausedCampaigns(deps: {
  sql: Sql;
  temporal: Client;
}): Promise<{ found: number; dispatched: number }> {
  const paused = await findPausedCampaigns(deps.sql, {
    savedSecondsAgo: PAUSED_GRACE_S,
    limit: SWEEP_LIMIT,
  });
  let dispatched = 0;
  for (let index = 0; index < paused.length; index += CONCURRENCY) {
    const outcomes = await Promise.all(
      paused
        .slice(index, index + CONCURRENCY)
        .map(({ id, workspaceId }) =>
          dispatchCampaign(
            deps,
            { workspaceId, campaignId: id },
            Date.now() + DISPATCH_CONFIRM_MS,
          ).then(({ confirmed }) => confirmed),
        ),
    );
    dispatched += outcomes.filter(Boolean).length;
    if (!outcomes.includes(true)) break;
  }
  return { found: paused.length, dispatched };
}
