/** herald sender create: options in, use-case, output. */
import { registerSender } from '../../commands/senders.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, flag, required } from './table.js';

/** herald sender create --workspace <slug> --provider <slug> --sender <name> [--pending] → {"id"} */
export async function senderCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, sender, providerSlug, approved, workspace } = await run(
    registerSender(context, {
      workspace: text(options, 'workspace'),
      provider: text(options, 'provider'),
      sender: text(options, 'sender'),
      approved: options.pending !== true,
    }),
  );
  return {
    json: { id },
    human: `Registered sender "${sender}" for ${providerSlug} in ${workspace.slug} (id ${id}, ${approved ? 'approved' : 'pending approval'})`,
  };
}

export const SENDER_COMMANDS: AdminCommand[] = [
  {
    name: 'sender create',
    run: senderCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('provider', '<slug>'),
          required('sender', '<name>'),
          flag('pending'),
        ],
      ],
    ],
  },
];
