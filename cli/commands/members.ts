/** Workspace members: list, change role, permissions or status, remove (SPEC §5.2.5). */
import { listMembers, type Member, removeMember, updateMember } from '../../db/members.js';
import {
  isPermission,
  isRole,
  PERMISSIONS,
  type Permission,
  ROLE_PERMISSIONS,
  ROLES,
} from '../../domain/access.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import { type CommandResult, type Options, optional, required, workspaceBySlug } from './admin.js';

const STATUSES = ['active', 'suspended'] as const;

const presentMember = (member: Member) => ({
  user_id: member.userId,
  email: member.email,
  role: member.role,
  permissions: member.permissions,
  status: member.status,
});

const describeMember = (member: Member) =>
  `${member.email} (user ${member.userId}): ${member.role}, ${member.status}, ` +
  `permissions ${member.permissions.join(', ') || 'none'}`;

/** herald member list --workspace <slug> → {"members": [...]} */
export async function memberList(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const members = await listMembers(context.sql, workspace.id);
  return {
    json: { members: members.map(presentMember) },
    human: members.length
      ? members.map(describeMember).join('\n')
      : `${workspace.slug} has no members`,
  };
}

/** A comma-separated list of permissions; `--permissions ""` (and only it) may be empty. */
function permissionList(options: Options, name: string): Permission[] | undefined {
  const raw = options[name];
  if (typeof raw !== 'string') return undefined;
  const items = [
    ...new Set(
      raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = items.filter((item) => !isPermission(item));
  if (unknown.length > 0 || (items.length === 0 && name !== 'permissions')) {
    throw new UsageError(
      `--${name} must be a comma-separated list of ${PERMISSIONS.join(', ')}` +
        (unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''),
    );
  }
  return items.filter(isPermission);
}

/** In the catalogue's order, so a member's list reads the same however it was built. */
const ordered = (permissions: Iterable<Permission>) => {
  const set = new Set(permissions);
  return PERMISSIONS.filter((permission) => set.has(permission));
};

/**
 * herald member update --workspace <slug> --email <email> [--role r]
 *   [--permissions a,b | --grant a,b --revoke c] [--status active|suspended] → the member
 * A new role resets the permissions to the role's set, before any --grant / --revoke.
 */
export async function memberUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const email = required(options, 'email');
  const role = optional(options, 'role');
  if (role !== undefined && !isRole(role))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const permissions = permissionList(options, 'permissions');
  const grant = permissionList(options, 'grant') ?? [];
  const revoke = permissionList(options, 'revoke') ?? [];
  if (permissions && (grant.length > 0 || revoke.length > 0))
    throw new UsageError('--permissions and --grant / --revoke are exclusive');
  const both = grant.filter((permission) => revoke.includes(permission));
  if (both.length > 0) throw new UsageError(`--grant and --revoke both name ${both.join(', ')}`);
  const status = optional(options, 'status');
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
    throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  if (role === undefined && !permissions && !grant.length && !revoke.length && !status)
    throw new UsageError('Give at least one of --role, --permissions, --grant, --revoke, --status');

  const result = await updateMember(context.sql, workspace.id, email, (current) => {
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
    throw new UsageError(`${email} is not a member of ${workspace.slug}`);
  if (result.outcome === 'last_owner')
    throw new UsageError(
      `${email} is the only active owner of ${workspace.slug}; make another member owner first`,
    );
  return { json: presentMember(result.member), human: `Updated ${describeMember(result.member)}` };
}

/** herald member remove --workspace <slug> --email <email> → {"removed": true} */
export async function memberRemove(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const email = required(options, 'email');
  const result = await removeMember(context.sql, workspace.id, email);
  if (result.outcome === 'not_member')
    throw new UsageError(`${email} is not a member of ${workspace.slug}`);
  if (result.outcome === 'last_owner')
    throw new UsageError(
      `${email} is the only active owner of ${workspace.slug}; make another member owner first`,
    );
  const connections = result.connectionsRevoked;
  return {
    json: { removed: true },
    human:
      `Removed ${email} from ${workspace.slug}` +
      (connections
        ? ` and revoked ${connections} MCP connection${connections === 1 ? '' : 's'}`
        : ''),
  };
}
