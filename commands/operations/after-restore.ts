/** What the operator runs once after restoring Herald's database from a backup. */
import { type Reconciled, reconcileRestoredDatabase } from '../../db/after-restore.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';

/**
 * Makes sure nothing sent after the backup was taken is sent twice, and that every unfinished
 * campaign runs (db/after-restore.ts). Run before the workers start.
 */
export function reconcileRestore(
  deps: Pick<CommandDeps, 'sql'>,
  actor: Actor,
): Promise<Reconciled> {
  // Deployment-wide: the line belongs to no workspace.
  return reconcileRestoredDatabase(deps.sql, (tx, done) =>
    writeAudit(tx, actor, null, {
      action: 'restore.reconciled',
      target: 'restored database',
      details: {
        campaign_messages: done.campaignMessages,
        otp_requests: done.otpRequests,
        campaigns: done.campaigns,
      },
    }),
  );
}
