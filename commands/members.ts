/** Workspace members (SPEC §5.2.5): list them, change role, permissions or status, remove one. */
import {
  listMembers,
  type Member,
  removeMember as removeMemberRow,
  updateMember as updateMemberRow,
} from '../db/members.js';
import type { Workspace } from '../db/workspaces.js';
import {
  isPermission,
  isRole,
  PERMISSIONS,
  type Permission,
  ROLE_PERMISSIONS,
  ROLES,
} from '../domain/access.js';
import type { CommandDeps } from './deps.js';
import {
  conflict,
  type FieldRef,
  fieldsOf,
  invalid,
  listOf,
  notFound,
  optionalText,
  requiredText,
} from './input.js';
import { findWorkspace } from './workspaces.js';

type Deps = Pick<CommandDeps, 'sql'>;

const STATUSES = ['active', 'suspended'] as const;

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
 * holding members.read.
 */
export async function updateWorkspaceMember(
  deps: Deps,
  input: UpdateMemberInput,
): Promise<{ member: Member }> {
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

  const result = await updateMemberRow(deps.sql, workspace.id, email, (current) => {
    const base = permissions ?? (role ? ROLE_PERMISSIONS[role] : current.permissions);
    const next = new Set([...base, ...grant]);
    for (const permission of revoke) next.delete(permission);
    return {
      role: role ?? current.role,
      permissions: ordered(next),
      status: (status as Member['status'] | undefined) ?? current.status,
    };
  });
  if (result.outcome === 'not_member')
    throw notFound`${email} is not a member of ${workspace.slug}`;
  if (result.outcome === 'last_owner') throw lastOwner(email, workspace);
  if (result.outcome === 'last_managing_owner') throw lastManagingOwner(email, workspace);
  return { member: result.member };
}

/** Removes the membership and revokes the user's MCP connections to the workspace. */
export async function removeWorkspaceMember(
  deps: Deps,
  input: { workspace?: string; email?: string },
): Promise<{ email: string; workspace: Workspace; connectionsRevoked: number }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const email = requiredText(input.email, { field: 'email' });
  const result = await removeMemberRow(deps.sql, workspace.id, email);
  if (result.outcome === 'not_member')
    throw notFound`${email} is not a member of ${workspace.slug}`;
  if (result.outcome === 'last_owner') throw lastOwner(email, workspace);
  if (result.outcome === 'last_managing_owner') throw lastManagingOwner(email, workspace);
  return { email, workspace, connectionsRevoked: result.connectionsRevoked };
}
