/** Quiet hours for marketing: the window the console shows, and the messages waiting for it. */
import { countHeldMessages, findQuietHours } from '../../db/quiet-hours.js';
import type { QuietHours } from '../../domain/quiet-hours.js';
import type { CommandDeps } from '../deps.js';

type Deps = Pick<CommandDeps, 'sql'>;

/** How many of a campaign's queued messages wait for their recipients' quiet hours to end. */
export async function waitingForQuietHours(deps: Deps, campaignId: number): Promise<number> {
  return countHeldMessages(deps.sql, campaignId);
}

/** The workspace's quiet hours window, or null: none. */
export async function workspaceQuietHours(
  deps: Deps,
  workspaceId: number,
): Promise<QuietHours | null> {
  return findQuietHours(deps.sql, workspaceId);
}
