/** herald recipient erase: one person's number, erased everywhere Herald holds it. */
import {
  eraseRecipientNumber,
  presentErasure,
} from '../../commands/messaging/recipient-erasure.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

/**
 * herald recipient erase --number <E.164> [--workspace <slug>] → presentErasure's object; without
 * --workspace, in every workspace. A second run finds nothing left and says so (`erased` false).
 */
export async function recipientErase(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const erasure = await run(
    eraseRecipientNumber(
      context,
      {
        number: text(options, 'number'),
        workspace: text(options, 'workspace'),
      },
      context.actor,
    ),
  );
  const where = erasure.workspace ? `workspace ${erasure.workspace.slug}` : 'every workspace';
  const shown = presentErasure(erasure);
  const counts = Object.entries(shown)
    .filter(([, value]) => typeof value === 'number' && value > 0)
    .map(([name, value]) => `  ${name.replaceAll('_', ' ')}: ${value}`);
  return {
    json: shown,
    human:
      erasure.changed === 0
        ? `Nothing to erase: ${where} holds no ${erasure.masked} (already erased, or never held); nothing was changed`
        : [`Erased ${erasure.masked} from ${where}:`, ...counts].join('\n'),
  };
}

export const RECIPIENT_COMMANDS: AdminCommand[] = [
  {
    name: 'recipient erase',
    run: recipientErase,
    synopses: [[[required('number', '<E.164>'), optional('workspace', '<slug>')]]],
  },
];
