/** Invitations to a workspace: the token is given once and stored only as a keyed hash. */
import {
  type InvitationListing,
  insertInvitation,
  listInvitations,
  revokeInvitation as revokeInvitationRow,
} from '../../db/invitations.js';
import type { Workspace } from '../../db/workspaces.js';
import { isRole, mayInvite, ROLES, type Role, type Standing } from '../../domain/access.js';
import { issueInvitationToken, keyedHash } from '../../security/tokens.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  fieldsOf,
  InputError,
  invalid,
  isEmail,
  notFound,
  optionalText,
  refuseAll,
  requiredText,
} from '../input.js';
import type { ActingMember } from './members.js';
import { findWorkspace } from './workspaces.js';

const EXPIRES_IN_DAYS = { min: 1, max: 30, default: 7 };

export interface CreateInvitationInput {
  workspace?: string;
  email?: string;
  /** `developer` when not given. */
  role?: string;
  /** 1 to 30; 7 when not given. */
  expiresInDays?: number;
  /**
   * The member inviting, from a front end that has one (the console): recorded as the inviter,
   * whose removal, suspension or demotion revokes the invitation. The operator's CLI has none.
   */
  by?: ActingMember;
}

export interface CreatedInvitation {
  id: number;
  email: string;
  role: Role;
  expiresAt: Date;
  /** The secret the invitee accepts with: shown once. */
  token: string;
  workspace: Workspace;
}

export async function createInvitation(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: CreateInvitationInput,
  actor: Actor,
): Promise<CreatedInvitation> {
  const field = fieldsOf<CreateInvitationInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  // Every rule is checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  const email = checks.check(() => {
    const given = requiredText(input.email, field('email'));
    if (!isEmail(given)) throw invalid`${field('email')} "${given}" is not an email address`;
    return given;
  });
  const role = checks.check(() => {
    const given = optionalText(input.role) ?? 'developer';
    if (!isRole(given)) throw invalid`${field('role')} must be one of ${ROLES.join(', ')}`;
    return given;
  });
  const days = input.expiresInDays ?? EXPIRES_IN_DAYS.default;
  if (!Number.isInteger(days) || days < EXPIRES_IN_DAYS.min || days > EXPIRES_IN_DAYS.max)
    checks.check(() => {
      throw invalid`${field('expiresInDays')} must be an integer from ${EXPIRES_IN_DAYS.min} to ${EXPIRES_IN_DAYS.max}`;
    });
  checks.done();
  if (email === undefined || role === undefined) throw new Error('refused above');
  const token = issueInvitationToken();
  // Checked on the inviter's membership as held until the commit: a concurrent demotion waits.
  const checkInviter = (inviter: Standing | undefined) => {
    if (inviter && mayInvite(inviter, role)) return;
    const managesTeam = inviter && ROLES.some((any) => mayInvite(inviter, any));
    throw new InputError('forbidden', [
      managesTeam
        ? 'Only an owner can invite an owner.'
        : `You no longer manage the members of ${workspace.slug}.`,
    ]);
  };
  const result = await insertInvitation(
    deps.sql,
    {
      workspaceId: workspace.id,
      email,
      role,
      tokenHash: keyedHash(deps.secret, 'invitation-hash', token),
      expiresInDays: days,
      invitedBy: input.by?.userId ?? null,
    },
    checkInviter,
    (tx, id) =>
      writeAudit(tx, actor, workspace.id, {
        action: 'invitation.created',
        target: `invitation ${email}`,
        details: { invitation_id: id, role },
      }),
  );
  if (result.outcome === 'already_member')
    throw conflict`${email} is already a member of ${workspace.slug}`;
  if (result.outcome === 'already_invited')
    throw conflict`${email} already has a pending invitation to ${workspace.slug} (id ${result.id}); revoke it to invite again`;
  return { id: result.id, email, role, expiresAt: result.expiresAt, token, workspace };
}

/** Every invitation of the workspace, whatever its status, oldest first. */
export async function listWorkspaceInvitations(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<{ invitations: InvitationListing[]; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  return { invitations: await listInvitations(deps.sql, workspace.id), workspace };
}

/** A pending (or expired) invitation stops being acceptable. */
export async function revokeInvitation(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number },
  actor: Actor,
): Promise<void> {
  const { id } = input;
  const outcome = await revokeInvitationRow(deps.sql, id, (tx, invitation) =>
    writeAudit(tx, actor, invitation.workspaceId, {
      action: 'invitation.revoked',
      target: `invitation ${invitation.email}`,
      details: {},
    }),
  );
  if (outcome === 'not_found') throw notFound`No invitation has the id ${id}`;
  if (outcome === 'accepted') throw conflict`Invitation ${id} was already accepted`;
  if (outcome === 'already_revoked') throw conflict`Invitation ${id} is already revoked`;
}
