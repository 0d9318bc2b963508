/** Invitations to a workspace: the token is printed once and stored only as a keyed hash. */
import { z } from 'zod';
import { insertInvitation, listInvitations, revokeInvitation } from '../../db/invitations.js';
import { isRole, ROLES } from '../../domain/access.js';
import { issueInvitationToken, keyedHash } from '../../security/tokens.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import {
  type CommandResult,
  idOption,
  type Options,
  optional,
  required,
  workspaceBySlug,
} from './admin.js';

const EXPIRES_IN_DAYS = { min: 1, max: 30, default: 7 };

function expiresInDays(options: Options): number {
  const raw = optional(options, 'expires-in-days');
  if (raw === undefined) return EXPIRES_IN_DAYS.default;
  const days = Number(raw);
  if (!/^\d+$/.test(raw) || days < EXPIRES_IN_DAYS.min || days > EXPIRES_IN_DAYS.max)
    throw new UsageError(
      `--expires-in-days must be an integer from ${EXPIRES_IN_DAYS.min} to ${EXPIRES_IN_DAYS.max}`,
    );
  return days;
}

/**
 * herald invite create --workspace <slug> --email <email> [--role r] [--expires-in-days n]
 *   → {"id", "expires_at", "token"}
 */
export async function inviteCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const email = required(options, 'email');
  if (!z.email().safeParse(email).success)
    throw new UsageError(`--email "${email}" is not an email address`);
  const role = optional(options, 'role') ?? 'developer';
  if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const days = expiresInDays(options);
  const token = issueInvitationToken();
  const result = await insertInvitation(context.sql, {
    workspaceId: workspace.id,
    email,
    role,
    tokenHash: keyedHash(context.secret, 'invitation-hash', token),
    expiresInDays: days,
  });
  if (result.outcome === 'already_member')
    throw new UsageError(`${email} is already a member of ${workspace.slug}`);
  if (result.outcome === 'already_invited')
    throw new UsageError(
      `${email} already has a pending invitation to ${workspace.slug} (id ${result.id}); revoke it to invite again`,
    );
  const expiresAt = result.expiresAt.toISOString();
  return {
    json: { id: result.id, expires_at: expiresAt, token },
    human:
      `Invited ${email} to ${workspace.slug} as ${role} (invitation ${result.id}, expires ${expiresAt}).\n` +
      `Token (shown once): ${token}`,
  };
}

/** herald invite list --workspace <slug> → {"invites": [...]}, every status, oldest first */
export async function inviteList(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const invites = (await listInvitations(context.sql, workspace.id)).map((invite) => ({
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status: invite.status,
    expires_at: invite.expiresAt.toISOString(),
  }));
  return {
    json: { invites },
    human: invites.length
      ? invites
          .map(
            (invite) =>
              `${invite.id}  ${invite.email}  ${invite.role}  ${invite.status}  expires ${invite.expires_at}`,
          )
          .join('\n')
      : `${workspace.slug} has no invitations`,
  };
}

/** herald invite revoke --id <id> → {"revoked": true} */
export async function inviteRevoke(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'invitation');
  const outcome = await revokeInvitation(context.sql, id);
  if (outcome === 'not_found') throw new UsageError(`No invitation has the id ${id}`);
  if (outcome === 'accepted') throw new UsageError(`Invitation ${id} was already accepted`);
  if (outcome === 'already_revoked') throw new UsageError(`Invitation ${id} is already revoked`);
  return { json: { revoked: true }, human: `Revoked invitation ${id}` };
}
