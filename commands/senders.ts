/** Sender ids a workspace may send from, per provider: approved, or pending approval. */
import { upsertSenderId } from '../db/otp-settings.js';
import type { Workspace } from '../db/workspaces.js';
import { MAX_OTP_SENDER_ID_LENGTH } from '../domain/otp.js';
import { characters } from '../domain/validation.js';
import type { CommandDeps } from './deps.js';
import { fieldsOf, invalid, requiredText, resourceSlug } from './input.js';
import { checkProvider } from './providers.js';
import { findWorkspace } from './workspaces.js';

export interface RegisterSenderInput {
  workspace?: string;
  /** A provider's slug, or `own`. */
  provider?: string;
  sender?: string;
  /** Approved unless false (pending approval). */
  approved?: boolean;
}

/** Registers the sender, or sets its approval when it is registered already. */
export async function registerSender(
  deps: Pick<CommandDeps, 'sql'>,
  input: RegisterSenderInput,
): Promise<{
  id: number;
  sender: string;
  providerSlug: string;
  approved: boolean;
  workspace: Workspace;
}> {
  const field = fieldsOf<RegisterSenderInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const providerSlug = resourceSlug(
    requiredText(input.provider, field('provider')),
    field('provider'),
  );
  // A disabled provider may be enabled again: its senders can be registered meanwhile.
  await checkProvider(deps, workspace, providerSlug, field('provider'), { mayBeDisabled: true });
  const sender = requiredText(input.sender, field('sender'));
  if (characters(sender) > MAX_OTP_SENDER_ID_LENGTH)
    throw invalid`${field('sender')} must be at most ${MAX_OTP_SENDER_ID_LENGTH} characters`;
  const approved = input.approved !== false;
  const { id } = await upsertSenderId(deps.sql, {
    workspaceId: workspace.id,
    providerSlug,
    sender,
    approved,
  });
  return { id, sender, providerSlug, approved, workspace };
}
