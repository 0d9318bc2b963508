/** Passwords: the user's stored hash, and the one-time reset links owners and admins issue. */

import type { Sql, TransactionSql } from './client.js';
import { revokeUserConsoleSessions } from './console-sessions.js';
import type { MemberSecondFactor } from './totp.js';
import { memberSecondFactorColumns } from './totp.js';

/**
 * The user's new password hash, and every console session of theirs but `keepSessionId` ended:
 * a changed password signs out whoever knew the old one. Returns the sessions ended.
 */
export async function replacePassword(
  tx: TransactionSql,
  userId: number,
  passwordHash: string,
  keepSessionId: number | null,
): Promise<number> {
  await tx`update users set password_hash = ${passwordHash} where id = ${userId}`;
  return revokeUserConsoleSessions(tx, userId, keepSessionId);
}

/** The workspaces the user is a member of: where a password change made outside one is audited. */
export async function listUserWorkspaceIds(sql: Sql | TransactionSql, userId: number) {
  const rows = await sql<{ workspaceId: number }[]>`
    select workspace_id from workspace_members where user_id = ${userId} order by workspace_id`;
  return rows.map((row) => row.workspaceId);
}

/**
 * The workspace's member `userId` as `byUserId` sees them (MemberSecondFactor: their role, and
 * whether they also belong where `byUserId` does not manage them), with both users' memberships
 * locked until the transaction ends, so a role changed meanwhile cannot slip past the check.
 */
export async function lockMemberForReset(
  tx: TransactionSql,
  input: { workspaceId: number; userId: number; byUserId: number },
): Promise<MemberSecondFactor | undefined> {
  // In (workspace, user) order, as lockMembers (db/members.ts) takes them.
  await tx`
    select 1 from workspace_members m
    where m.user_id = ${input.userId} or m.user_id = ${input.byUserId}
    order by m.workspace_id, m.user_id
    for update of m`;
  const [member] = await tx<MemberSecondFactor[]>`
    select ${memberSecondFactorColumns(tx, input.byUserId)}
    from workspace_members m join users u on u.id = m.user_id
    where m.workspace_id = ${input.workspaceId} and m.user_id = ${input.userId}`;
  return member;
}

/** A new reset link for the user, replacing any earlier one of theirs not yet used. */
export async function insertPasswordReset(
  tx: TransactionSql,
  input: {
    userId: number;
    workspaceId: number;
    tokenHash: Buffer;
    createdByUserId: number;
    expiresInHours: number;
  },
): Promise<Date> {
  await tx`delete from password_resets where user_id = ${input.userId} and used_at is null`;
  const [reset] = await tx<{ expiresAt: Date }[]>`
    insert into password_resets (user_id, workspace_id, token_hash, created_by_user_id, expires_at)
    values (${input.userId}, ${input.workspaceId}, ${input.tokenHash}, ${input.createdByUserId},
      now() + make_interval(hours => ${input.expiresInHours}))
    returning expires_at`;
  return (reset as { expiresAt: Date }).expiresAt;
}

export interface OpenPasswordReset {
  id: number;
  userId: number;
  email: string;
  workspaceId: number;
}

/** The unused, unexpired reset link stored under `tokenHash`. */
export async function findOpenPasswordReset(
  sql: Sql | TransactionSql,
  tokenHash: Buffer,
): Promise<OpenPasswordReset | undefined> {
  const [reset] = await sql<OpenPasswordReset[]>`
    select r.id, r.user_id, u.email, r.workspace_id
    from password_resets r join users u on u.id = r.user_id
    where r.token_hash = ${tokenHash} and r.used_at is null and r.expires_at > now()`;
  return reset;
}

/** Marks the link used; false when it was used (or replaced, or expired) meanwhile. */
export async function usePasswordReset(tx: TransactionSql, id: number): Promise<boolean> {
  const used = await tx`
    update password_resets set used_at = now()
    where id = ${id} and used_at is null and expires_at > now()`;
  return used.count === 1;
}
