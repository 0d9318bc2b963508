/** herald restore reconcile: the step after a database restore (docs/operations.md "Backups and restore"). */
import { reconcileRestore } from '../../commands/operations/after-restore.js';
import { type AdminContext, operatorActor } from '../context.js';
import type { CommandResult } from './options.js';
import type { AdminCommand } from './table.js';

/** herald restore reconcile → {"campaign_messages", "otp_requests", "campaigns"} */
export async function restoreReconcile(context: AdminContext): Promise<CommandResult> {
  const done = await reconcileRestore(context, operatorActor());
  return {
    json: {
      campaign_messages: done.campaignMessages,
      otp_requests: done.otpRequests,
      campaigns: done.campaigns,
    },
    human:
      `${done.campaignMessages} queued campaign messages and ${done.otpRequests} pending OTP ` +
      'requests will be looked up at their provider before any submission; ' +
      `${done.campaigns} unfinished campaigns will be dispatched again by the workers. ` +
      'Start the workers now.',
  };
}

export const RESTORE_COMMANDS: AdminCommand[] = [
  {
    name: 'restore reconcile',
    run: restoreReconcile,
    synopses: [[[]]],
    summary: 'after restoring the database, before starting the workers',
  },
];
