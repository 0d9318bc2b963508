/** herald sender create|list|delete: options in, use-case, output. */
import {
  deleteSender,
  listSenders,
  registerSender,
  type SenderListing,
} from '../../commands/providers/senders.js';
import type { AdminContext } from '../context.js';
import { listing } from '../output.js';
import {
  type CommandResult,
  optional as given,
  idOption,
  type Options,
  run,
  text,
} from './options.js';
import { type AdminCommand, flag, required } from './table.js';

const presentSender = (sender: SenderListing) => ({
  id: sender.id,
  provider_slug: sender.providerSlug,
  sender: sender.sender,
  approved: sender.approved,
  created_at: sender.createdAt.toISOString(),
});

/** herald sender create --workspace <slug> --provider <slug> --sender <name> [--pending] → {"id"} */
export async function senderCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, sender, providerSlug, approved, workspace } = await run(
    registerSender(
      context,
      {
        workspace: text(options, 'workspace'),
        provider: text(options, 'provider'),
        sender: text(options, 'sender'),
        approved: options.pending !== true,
      },
      context.actor,
    ),
  );
  return {
    json: { id },
    human: `Registered sender "${sender}" for ${providerSlug} in ${workspace.slug} (id ${id}, ${approved ? 'approved' : 'pending approval'})`,
  };
}

/** herald sender list --workspace <slug> → {"senders": [...]}, by provider, then sender */
export async function senderList(context: AdminContext, options: Options): Promise<CommandResult> {
  const senders = await run(listSenders(context, { workspace: text(options, 'workspace') }));
  return {
    json: { senders: senders.map(presentSender) },
    human: listing(
      senders,
      ['ID', 'SENDER', 'PROVIDER', 'STATUS'],
      (sender) => [
        sender.id,
        sender.sender,
        sender.providerSlug,
        sender.approved ? 'approved' : 'pending approval',
      ],
      `${given(options, 'workspace')} has no sender ids`,
    ),
  };
}

/**
 * herald sender delete --workspace <slug> --id <id> → {"id", "deleted": true}; refused while an
 * OTP service sends from it.
 */
export async function senderDelete(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'sender');
  const { sender, workspace } = await run(
    deleteSender(context, { workspace: text(options, 'workspace'), id }, context.actor),
  );
  return {
    json: {
      id: sender.id,
      sender: sender.sender,
      provider_slug: sender.providerSlug,
      deleted: true,
    },
    human: `Deleted sender "${sender.sender}" of ${sender.providerSlug} from ${workspace.slug}`,
  };
}

const WORKSPACE = required('workspace', '<slug>');

export const SENDER_COMMANDS: AdminCommand[] = [
  {
    name: 'sender create',
    run: senderCreate,
    synopses: [
      [[WORKSPACE, required('provider', '<slug>'), required('sender', '<name>'), flag('pending')]],
    ],
  },
  { name: 'sender list', run: senderList, synopses: [[[WORKSPACE]]] },
  {
    name: 'sender delete',
    run: senderDelete,
    synopses: [[[WORKSPACE, required('id', '<id>')]]],
  },
];
