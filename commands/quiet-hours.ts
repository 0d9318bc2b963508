/** Quiet hours for marketing: what the console shows of messages waiting for them. */
import { countHeldMessages } from '../db/quiet-hours.js';
import type { CommandDeps } from './deps.js';

type Deps = Pick<CommandDeps, 'sql'>;

/** How many of a campaign's queued messages wait for their recipients' quiet hours to end. */
export async function waitingForQuietHours(deps: Deps, campaignId: number): Promise<number> {
  return countHeldMessages(deps.sql, campaignId);
}
