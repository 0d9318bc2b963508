import { mayInvite, type Permission, type Role } from '../domain/access.js';
import { revokeMemberApiKeys } from './api-keys.js';
import type { Sql, TransactionSql } from './client.js';
import { type RevokedInvitation, revokeInvitationsOf } from './invitations.js';
import { revokeMemberConnections } from './oauth-connections.js';

export interface Member {
  userId: number;
  email: string;
  role: Role;
  permissions: Permission[];
  status: 'active' | 'suspended';
}

export type MemberChange = Pick<Member, 'role' | 'permissions' | 'status'>;

export async function listMembers(sql: Sql, workspaceId: number): Promise<Member[]> {
  return sql<Member[]>`
    select m.user_id, u.email, m.role, m.permissions, m.status
    from workspace_members m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId}
    order by lower(u.email), m.user_id`;
}

/**
 * Locks the workspace's memberships (so two operators cannot each demote one of two owners)
 * and returns the one of `email` with the number of active owners, and of those who hold
 * members.read (who can manage the team), and every membership as locked (`team`: the acting
 * member's role is checked on it, not on what they read before).
 */
async function lockMembers(tx: TransactionSql, workspaceId: number, email: string) {
  const rows = await tx<(Member & { isTarget: boolean })[]>`
    select m.user_id, u.email, m.role, m.permissions, m.status,
           lower(u.email) = lower(${email}) as is_target
    from workspace_members m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId}
    order by m.user_id
    for update of m`;
  const activeOwners = rows.filter(isActiveOwner);
  const target = rows.find((row) => row.isTarget);
  const team: Member[] = rows.map(({ isTarget: _, ...member }) => member);
  return {
    team,
    member: target && {
      userId: target.userId,
      email: target.email,
      role: target.role,
      permissions: target.permissions,
      status: target.status,
    },
    activeOwners: activeOwners.length,
    managingOwners: activeOwners.filter(isManagingOwner).length,
  };
}

function isActiveOwner(member: MemberChange): boolean {
  return member.role === 'owner' && member.status === 'active';
}

/** An active owner who can still open the team to change it: the one the workspace must keep. */
function isManagingOwner(member: MemberChange): boolean {
  return isActiveOwner(member) && member.permissions.includes('members.read');
}

export type MemberUpdate =
  | { outcome: 'updated'; member: Member; invitationsRevoked: RevokedInvitation[] }
  | { outcome: 'not_member' }
  | { outcome: 'last_owner' }
  | { outcome: 'last_managing_owner' };

/**
 * Applies `change` (which sees the current values and the whole team as locked, and may throw)
 * to the member of `email`.
 * A change that would leave a workspace that has an active owner without one is refused, and so
 * is one that would leave it without an active owner holding members.read (nobody could then
 * reach the team to give it back). The member's pending invitations that they could no longer
 * make (domain/access.ts mayInvite) are revoked with the change.
 */
export async function updateMember(
  sql: Sql,
  workspaceId: number,
  email: string,
  change: (current: Member, team: readonly Member[]) => MemberChange,
  /** Runs in the same transaction after the update (its audit lines), given before and after. */
  alongside?: (
    tx: TransactionSql,
    update: { before: Member; after: Member; invitationsRevoked: RevokedInvitation[] },
  ) => Promise<void>,
): Promise<MemberUpdate> {
  return sql.begin(async (tx) => {
    const locked = await lockMembers(tx, workspaceId, email);
    const { member, activeOwners, managingOwners } = locked;
    if (!member) return { outcome: 'not_member' } as const;
    const next = change(member, locked.team);
    if (activeOwners === 1 && isActiveOwner(member) && !isActiveOwner(next))
      return { outcome: 'last_owner' } as const;
    if (managingOwners === 1 && isManagingOwner(member) && !isManagingOwner(next))
      return { outcome: 'last_managing_owner' } as const;
    const [updated] = await tx<Member[]>`
      update workspace_members m
      set role = ${next.role}, permissions = ${next.permissions as string[]}, status = ${next.status}
      from users u
      where m.workspace_id = ${workspaceId} and m.user_id = ${member.userId} and u.id = m.user_id
      returning m.user_id, u.email, m.role, m.permissions, m.status`;
    const invitationsRevoked = await revokeInvitationsOf(tx, workspaceId, member.userId, (role) =>
      mayInvite(next, role),
    );
    await alongside?.(tx, { before: member, after: updated as Member, invitationsRevoked });
    return { outcome: 'updated', member: updated as Member, invitationsRevoked } as const;
  });
}

export type MemberRemoval =
  | {
      outcome: 'removed';
      connectionsRevoked: number;
      apiKeysRevoked: number;
      invitationsRevoked: RevokedInvitation[];
    }
  | { outcome: 'not_member' }
  | { outcome: 'last_owner' }
  | { outcome: 'last_managing_owner' };

/**
 * Removes the membership and revokes the user's MCP connections to the workspace, their API keys
 * of it and their pending invitations to it, so that adding the user again later does not revive
 * them, once `check` (which sees the member and the whole team as locked, and may throw) allows
 * it. The last active owner cannot be removed, nor the last active owner holding members.read.
 */
export async function removeMember(
  sql: Sql,
  workspaceId: number,
  email: string,
  check: (current: Member, team: readonly Member[]) => void = () => {},
  /** Runs in the same transaction after the removal (its audit lines). */
  alongside?: (
    tx: TransactionSql,
    removal: { member: Member; invitationsRevoked: RevokedInvitation[] },
  ) => Promise<void>,
): Promise<MemberRemoval> {
  return sql.begin(async (tx) => {
    const locked = await lockMembers(tx, workspaceId, email);
    const { member, activeOwners, managingOwners } = locked;
    if (!member) return { outcome: 'not_member' } as const;
    check(member, locked.team);
    if (activeOwners === 1 && isActiveOwner(member)) return { outcome: 'last_owner' } as const;
    if (managingOwners === 1 && isManagingOwner(member))
      return { outcome: 'last_managing_owner' } as const;
    await tx`
      delete from workspace_members
      where workspace_id = ${workspaceId} and user_id = ${member.userId}`;
    const connectionsRevoked = await revokeMemberConnections(tx, workspaceId, member.userId);
    const apiKeysRevoked = await revokeMemberApiKeys(tx, workspaceId, member.userId);
    const invitationsRevoked = await revokeInvitationsOf(
      tx,
      workspaceId,
      member.userId,
      () => false,
    );
    await alongside?.(tx, { member, invitationsRevoked });
    return { outcome: 'removed', connectionsRevoked, apiKeysRevoked, invitationsRevoked } as const;
  });
}
