/** Workspace members (docs/spec.md §5.2.5): list them, change role, permissions or status, remove one. */

import type { RevokedInvitation } from '../../db/invitations.js';
import {
  listMembers,
  type Member,
  removeMember as removeMemberRow,
  updateMember as updateMemberRow,
} from '../../db/members.js';
import type { Workspace } from '../../db/workspaces.js';
import {
  isPermission,
  isRole,
  PERMISSIONS,
  type Permission,
  ROLE_PERMISSIONS,
  ROLES,
  type Role,
} from '../../domain/access.js';
import type { Actor as AuditActor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  type FieldRef,
  fieldsOf,
  InputError,
  invalid,
  listOf,
  notFound,
  optionalText,
  requiredText,
} from '../input.js';
import { invitationsRevokedLines, memberChangeLines } from './member-audit.js';
import { findWorkspace } from './workspaces.js';

type Deps = Pick<CommandDeps, 'sql'>;

const STATUSES = ['active', 'suspended'] as const;

/**
 * The member acting on another, from a front end that has one (the console); the operator's CLI
 * has none and answers to no role. Their role and permissions are read, with the target's, from
 * the memberships as locked for the change, so neither can have changed since the check.
 */
export interface ActingMember {
  userId: number;
}

type Actor = { userId: number; role: Role | null };
type Target = { userId: number; role: Role };

/**
 * Why `actor` may not change the permissions of `member`; undefined when they may. Only an owner
 * changes an owner's, or a non-owner's own (an admin granting themselves back what an owner took
 * would undo the owner).
 */
export function permissionEditRefusal(actor: Actor, member: Target): string | undefined {
  if (actor.role === 'owner') return undefined;
  if (member.role === 'owner') return "Only an owner can change an owner's permissions.";
  if (member.userId === actor.userId)
    return 'Only an owner can change your own permissions; ask an owner of the workspace.';
  return undefined;
}

/** Why `actor` may not change the role or status of `member`, remove them, or give them `role`. */
export function membershipEditRefusal(
  actor: Actor,
  member: Target,
  role?: string,
): string | undefined {
  if (actor.role === 'owner') return undefined;
  if (member.role === 'owner' || role === 'owner')
    return 'Only an owner can change an owner, or make one.';
  return undefined;
}

/** Why `actor` may not give `permissions` (nobody grants what they do not hold); or undefined. */
export function grantRefusal(
  actor: { permissions: readonly Permission[] },
  permissions: readonly Permission[],
): string | undefined {
  const notHeld = permissions.filter((permission) => !actor.permissions.includes(permission));
  return notHeld.length === 0
    ? undefined
    : `You can grant only permissions you hold yourself, and you do not hold ${notHeld.join(', ')}.`;
}

const forbidden = (message: string) => new InputError('forbidden', [message]);

/**
 * A pending invitation a member's change revoked, and why: the invitations of a removed or
 * suspended member, and those a demoted one could no longer make (domain/access.ts mayInvite).
 */
export interface InvitationRevokedWithInviter extends RevokedInvitation {
  reason: 'inviter_removed' | 'inviter_suspended' | 'inviter_demoted';
}

const because = (
  invitations: readonly RevokedInvitation[],
  reason: InvitationRevokedWithInviter['reason'],
): InvitationRevokedWithInviter[] => invitations.map((invitation) => ({ ...invitation, reason }));

/** The acting member as locked: refused unless they still manage the team (console/access.ts). */
function lockedActor(team: readonly Member[], by: ActingMember, workspace: Workspace): Member {
  const actor = team.find((member) => member.userId === by.userId);
  if (
    actor?.status !== 'active' ||
    (actor.role !== 'owner' && actor.role !== 'admin') ||
    !actor.permissions.includes('members.read')
  )
    throw forbidden(`You no longer manage the members of ${workspace.slug}.`);
  return actor;
}

export async function listWorkspaceMembers(
  deps: Deps,
  input: { workspace?: string },
): Promise<{ members: Member[]; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  return { members: await listMembers(deps.sql, workspace.id), workspace };
}

export interface UpdateMemberInput {
  workspace?: string;
  email?: string;
  /** A new role resets the permissions to the role's set, before any grant or revoke. */
  role?: string;
  /** The whole set (may be empty), or... */
  permissions?: string[];
  /** ...changes to the current set. */
  grant?: string[];
  revoke?: string[];
  status?: string;
  by?: ActingMember;
}

/** Known permissions, each once; only `permissions` itself may be empty. */
function permissionList(items: string[] | undefined, field: FieldRef): Permission[] | undefined {
  if (items === undefined) return undefined;
  const given = [...new Set(items.map((item) => item.trim()).filter(Boolean))];
  const unknown = given.filter((item) => !isPermission(item));
  if (unknown.length > 0 || (given.length === 0 && field.field !== 'permissions')) {
    throw invalid`${field} must be a comma-separated list of ${PERMISSIONS.join(', ')}${
      unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''
    }`;
  }
  return given.filter(isPermission);
}

/** In the catalogue's order, so a member's list reads the same however it was built. */
const ordered = (permissions: Iterable<Permission>) => {
  const set = new Set(permissions);
  return PERMISSIONS.filter((permission) => set.has(permission));
};

const lastOwner = (email: string, workspace: Workspace) =>
  conflict`${email} is the only active owner of ${workspace.slug}; make another member owner first`;

const lastManagingOwner = (email: string, workspace: Workspace) =>
  conflict`${email} is the only active owner of ${workspace.slug} with members.read, which managing the team needs; grant it to another owner first`;

/**
 * Refused when it would leave the workspace without an active owner, or without an active owner
 * holding members.read; and, for an acting member, as permissionEditRefusal,
 * membershipEditRefusal and grantRefusal say (what a new role brings counts as granted: an admin
 * must not hand out, or take back for themselves, what they do not hold).
 */
export async function updateWorkspaceMember(
  deps: Deps,
  input: UpdateMemberInput,
  actor: AuditActor,
): Promise<{ member: Member; invitationsRevoked: InvitationRevokedWithInviter[] }> {
  const field = fieldsOf<UpdateMemberInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const email = requiredText(input.email, field('email'));
  const role = optionalText(input.role);
  if (role !== undefined && !isRole(role))
    throw invalid`${field('role')} must be one of ${ROLES.join(', ')}`;
  const permissions = permissionList(input.permissions, field('permissions'));
  const grant = permissionList(input.grant, field('grant')) ?? [];
  const revoke = permissionList(input.revoke, field('revoke')) ?? [];
  if (permissions && (grant.length > 0 || revoke.length > 0))
    throw invalid`${field('permissions')} and ${field('grant')} / ${field('revoke')} are exclusive`;
  const both = grant.filter((permission) => revoke.includes(permission));
  if (both.length > 0)
    throw invalid`${field('grant')} and ${field('revoke')} both name ${both.join(', ')}`;
  const status = optionalText(input.status);
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
    throw invalid`${field('status')} must be one of ${STATUSES.join(', ')}`;
  if (role === undefined && !permissions && !grant.length && !revoke.length && !status) {
    const fields = (['role', 'permissions', 'grant', 'revoke', 'status'] as const).map(field);
    throw invalid`Give at least one of ${listOf(fields)}`;
  }

  const editsPermissions = permissions !== undefined || grant.length > 0 || revoke.length > 0;
  const result = await updateMemberRow(
    deps.sql,
    workspace.id,
    email,
    (current, team) => {
      const base = permissions ?? (role ? ROLE_PERMISSIONS[role] : current.permissions);
      const next = new Set([...base, ...grant]);
      for (const permission of revoke) next.delete(permission);
      const change = {
        role: role ?? current.role,
        permissions: ordered(next),
        status: (status as Member['status'] | undefined) ?? current.status,
      };
      if (input.by) {
        const actor = lockedActor(team, input.by, workspace);
        const refusal =
          ((role !== undefined || status !== undefined) &&
            membershipEditRefusal(actor, current, role)) ||
          (editsPermissions && permissionEditRefusal(actor, current)) ||
          grantRefusal(
            actor,
            change.permissions.filter((permission) => !current.permissions.includes(permission)),
          );
        if (refusal) throw forbidden(refusal);
      }
      return change;
    },
    async (tx, { before, after, invitationsRevoked }) => {
      const lines = [
        ...memberChangeLines(before, after, { role, permissions: editsPermissions }),
        ...invitationsRevokedLines(because(invitationsRevoked, revokedReason(after))),
      ];
      for (const line of lines) await writeAudit(tx, actor, workspace.id, line);
    },
  );
  if (result.outcome === 'not_member')
    throw notFound`${email} is not a member of ${workspace.slug}`;
  if (result.outcome === 'last_owner') throw lastOwner(email, workspace);
  if (result.outcome === 'last_managing_owner') throw lastManagingOwner(email, workspace);
  const { member } = result;
  return { member, invitationsRevoked: because(result.invitationsRevoked, revokedReason(member)) };
}

/** Why an updated member's invitations went: suspended, or demoted out of making them. */
const revokedReason = (member: Member) =>
  member.status === 'suspended' ? 'inviter_suspended' : 'inviter_demoted';

/**
 * Removes the membership and revokes the user's MCP connections to the workspace, their API keys
 * of it and their pending invitations to it; for an acting member, as membershipEditRefusal says.
 */
export async function removeWorkspaceMember(
  deps: Deps,
  input: { workspace?: string; email?: string; by?: ActingMember },
  actor: AuditActor,
): Promise<{
  email: string;
  workspace: Workspace;
  connectionsRevoked: number;
  apiKeysRevoked: number;
  invitationsRevoked: InvitationRevokedWithInviter[];
}> {
  const workspace = await findWorkspace(deps, input.workspace);
  const email = requiredText(input.email, { field: 'email' });
  const { by } = input;
  const result = await removeMemberRow(
    deps.sql,
    workspace.id,
    email,
    (current, team) => {
      const refusal = by && membershipEditRefusal(lockedActor(team, by, workspace), current);
      if (refusal) throw forbidden(refusal);
    },
    async (tx, removal) => {
      const lines = [
        { action: 'member.removed', target: `member ${removal.member.email}`, details: {} },
        ...invitationsRevokedLines(because(removal.invitationsRevoked, 'inviter_removed')),
      ];
      for (const line of lines) await writeAudit(tx, actor, workspace.id, line);
    },
  );
  if (result.outcome === 'not_member')
    throw notFound`${email} is not a member of ${workspace.slug}`;
  if (result.outcome === 'last_owner') throw lastOwner(email, workspace);
  if (result.outcome === 'last_managing_owner') throw lastManagingOwner(email, workspace);
  const { connectionsRevoked, apiKeysRevoked } = result;
  const invitationsRevoked = because(result.invitationsRevoked, 'inviter_removed');
  return { email, workspace, connectionsRevoked, apiKeysRevoked, invitationsRevoked };
}
