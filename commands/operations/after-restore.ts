/** What the operator runs once after restoring Herald's database from a backup. */
import { type Reconciled, reconcileRestoredDatabase } from '../../db/after-restore.js';
import type { CommandDeps } from '../deps.js';

/**
 * Makes sure nothing sent after the backup was taken is sent twice, and that every unfinished
 * campaign runs (db/after-restore.ts). Run before the workers start.
 */
export function reconcileRestore(deps: Pick<CommandDeps, 'sql'>): Promise<Reconciled> {
  return reconcileRestoredDatabase(deps.sql);
}
