/** Sender ids a workspace may send from, per provider: approved, or pending approval. */
import { upsertSenderId } from '../../db/otp-settings.js';
import {
  deleteSenderId,
  insertNewSenderId,
  listSenderIds,
  lockSenderListing,
  otpServicesUsingSender,
  type SenderListing,
} from '../../db/sender-ids.js';
import type { Workspace } from '../../db/workspaces.js';
import { MAX_OTP_SENDER_ID_LENGTH } from '../../domain/otp.js';
import { OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import { characters } from '../../domain/validation.js';
import type { Actor } from '../actor.js';
import { type AuditLine, writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  fieldsOf,
  invalid,
  notFound,
  refuseAll,
  requiredText,
  resourceSlug,
} from '../input.js';
import { capitalised, dependents } from '../otp/dependents.js';
import { findWorkspace } from '../team/workspaces.js';
import { checkProvider } from './providers.js';

export type { SenderListing };

type Deps = Pick<CommandDeps, 'sql'>;

/*
 * Each change takes its `actor` and writes its audit line in the change's transaction
 * (commands/audit.ts).
 */

/** A sender in the log: by its text and its provider (one sender may be registered for several). */
const senderTarget = (sender: { sender: string; providerSlug: string }) =>
  `Sender ${sender.sender} (${sender.providerSlug})`;

const registeredLine = (registered: Omit<RegisteredSender, 'id' | 'workspace'>): AuditLine => ({
  action: 'sender.registered',
  target: senderTarget(registered),
  details: { approved: registered.approved },
});

export interface RegisterSenderInput {
  workspace?: string;
  /** A provider's slug, or `own`. */
  provider?: string;
  sender?: string;
  /** Approved unless false (pending approval). */
  approved?: boolean;
}

const field = fieldsOf<RegisterSenderInput>();

/** The workspace, and the provider and sender read by the rules every registration follows. */
async function senderOf(deps: Deps, input: RegisterSenderInput) {
  const workspace = await findWorkspace(deps, input.workspace);
  // Both are checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  const providerSlug = await checks.checkAsync(async () => {
    const slug = resourceSlug(requiredText(input.provider, field('provider')), field('provider'));
    // A disabled provider may be enabled again: its senders can be registered meanwhile.
    await checkProvider(deps, workspace, slug, field('provider'), { mayBeDisabled: true });
    return slug;
  });
  const sender = checks.check(() => {
    const given = requiredText(input.sender, field('sender'));
    if (characters(given) > MAX_OTP_SENDER_ID_LENGTH)
      throw invalid`${field('sender')} must be at most ${MAX_OTP_SENDER_ID_LENGTH} characters`;
    return given;
  });
  checks.done();
  if (providerSlug === undefined || sender === undefined) throw new Error('refused above');
  return { workspace, providerSlug, sender };
}

export interface RegisteredSender {
  id: number;
  sender: string;
  providerSlug: string;
  approved: boolean;
  workspace: Workspace;
}

/** The operator's registration: registers the sender, or sets its approval when it is registered already. */
export async function registerSender(
  deps: Deps,
  input: RegisterSenderInput,
  actor: Actor,
): Promise<RegisteredSender> {
  const { workspace, providerSlug, sender } = await senderOf(deps, input);
  const approved = input.approved !== false;
  const id = await deps.sql.begin(async (tx) => {
    const { id } = await upsertSenderId(tx, {
      workspaceId: workspace.id,
      providerSlug,
      sender,
      approved,
    });
    await writeAudit(tx, actor, workspace.id, registeredLine({ sender, providerSlug, approved }));
    return id;
  });
  return { id, sender, providerSlug, approved, workspace };
}

/**
 * A workspace member's registration (the console): a sender for one of the workspace's own
 * providers is approved at once, the workspace answering for its own account; a sender for
 * `own`, the operator's provider, waits for the operator's approval (`herald sender create`).
 */
export async function requestSender(
  deps: Deps,
  input: Omit<RegisterSenderInput, 'approved'>,
  actor: Actor,
): Promise<RegisteredSender> {
  const { workspace, providerSlug, sender } = await senderOf(deps, input);
  const approved = providerSlug !== OWN_PROVIDER_SLUG;
  const row = await deps.sql.begin(async (tx) => {
    const row = await insertNewSenderId(tx, {
      workspaceId: workspace.id,
      providerSlug,
      sender,
      approved,
    });
    if (row)
      await writeAudit(tx, actor, workspace.id, registeredLine({ sender, providerSlug, approved }));
    return row;
  });
  if (!row)
    throw conflict`${field('sender')}: "${sender}" is already registered for ${providerSlug} in ${workspace.slug}`;
  return { id: row.id, sender, providerSlug, approved, workspace };
}

/** The workspace's senders, by provider. */
export async function listSenders(
  deps: Deps,
  input: { workspace?: string },
): Promise<SenderListing[]> {
  const workspace = await findWorkspace(deps, input.workspace);
  return listSenderIds(deps.sql, workspace.id);
}

/**
 * Refused while an OTP service sends from the sender: its sends would all be refused. The sender
 * is locked while its services are checked, so none can be saved with it meanwhile.
 */
export async function deleteSender(
  deps: Deps,
  input: { workspace?: string; id: number },
  actor: Actor,
): Promise<{ sender: SenderListing; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const unknown = () => notFound`${workspace.slug} has no sender id ${input.id}`;
  if (!Number.isSafeInteger(input.id)) throw unknown();
  const sender = await deps.sql.begin(async (tx) => {
    const sender = await lockSenderListing(tx, workspace.id, input.id);
    if (!sender) throw unknown();
    const services = await otpServicesUsingSender(tx, workspace.id, sender, OWN_PROVIDER_SLUG);
    if (services.length > 0) {
      const { who, sends, them } = dependents(services);
      throw conflict`${capitalised(who)} ${sends} from "${sender.sender}" through ${sender.providerSlug}; change ${them} first`;
    }
    if (!(await deleteSenderId(tx, workspace.id, sender.id))) throw unknown();
    await writeAudit(tx, actor, workspace.id, {
      action: 'sender.deleted',
      target: senderTarget(sender),
      details: {},
    });
    return sender;
  });
  return { sender, workspace };
}
