import type { Role } from '../domain/access.js';
import type { Sql, TransactionSql } from './client.js';
import { revokeUserConsoleSessions } from './console-sessions.js';

export interface TotpState {
  email: string;
  /** Encrypted (security/credentials.ts); null when never set up. */
  secret: Buffer | null;
  enabledAt: Date | null;
  lastStep: number | null;
}

export async function findTotpState(sql: Sql, userId: number): Promise<TotpState | undefined> {
  const [row] = await sql<TotpState[]>`
    select email, totp_secret as secret, totp_enabled_at as enabled_at, totp_last_step as last_step
    from users where id = ${userId}`;
  return row;
}

/** A new secret awaiting its first code; refused (false) once a factor is in use. */
export async function storePendingTotpSecret(
  sql: Sql,
  userId: number,
  secret: Buffer,
): Promise<boolean> {
  const result = await sql`
    update users set totp_secret = ${secret}, totp_last_step = null
    where id = ${userId} and totp_enabled_at is null`;
  return result.count === 1;
}

/**
 * Takes the time step a code was accepted for, once: false when that step (or a later one) was
 * already used, so a code is never accepted twice. `enable` also puts the factor in use.
 */
export async function useTotpStep(
  sql: Sql | TransactionSql,
  userId: number,
  step: number,
  enable: boolean,
): Promise<boolean> {
  const result = await sql`
    update users set totp_last_step = ${step},
      totp_enabled_at = ${enable ? sql`coalesce(totp_enabled_at, now())` : sql`totp_enabled_at`}
    where id = ${userId} and (totp_last_step is null or totp_last_step < ${step})`;
  return result.count === 1;
}

/** The workspace's slug; undefined when there is no such workspace. */
export async function setRequireSecondFactor(
  sql: Sql | TransactionSql,
  workspaceId: number,
  required: boolean,
): Promise<string | undefined> {
  const [row] = await sql<{ slug: string }[]>`
    update workspaces set require_second_factor = ${required} where id = ${workspaceId}
    returning slug`;
  return row?.slug;
}

/** Whether any workspace the user is an active member of requires a second factor. */
export async function secondFactorRequiredFor(sql: Sql, userId: number): Promise<boolean> {
  const [row] = await sql<{ required: boolean }[]>`
    select exists (
      select 1 from workspace_members m join workspaces w on w.id = m.workspace_id
      where m.user_id = ${userId} and m.status = 'active' and w.require_second_factor
    ) as required`;
  return row?.required ?? false;
}

/** A member of a workspace and whether their second factor is in use. */
export interface MemberSecondFactor {
  userId: number;
  email: string;
  role: Role;
  status: 'active' | 'suspended';
  enrolled: boolean;
  /**
   * Whether they also belong to a workspace where the one looking (`byUserId`) could not reset
   * their factor: not an active owner or admin holding members.read there, or an admin where
   * they are owner. Their factor guards that workspace too.
   */
  beyondReach: boolean;
}

/**
 * The columns of MemberSecondFactor, for a member row `m` joined to its user `u` (a password
 * reset asks the same question of reach: db/passwords.ts).
 */
export const memberSecondFactorColumns = (sql: Sql | TransactionSql, byUserId: number) => sql`
  m.user_id, u.email, m.role, m.status, u.totp_enabled_at is not null as enrolled,
  exists (
    select 1 from workspace_members elsewhere
    where elsewhere.user_id = m.user_id and elsewhere.workspace_id <> m.workspace_id
      and not exists (
        select 1 from workspace_members manager
        where manager.workspace_id = elsewhere.workspace_id and manager.user_id = ${byUserId}
          and manager.status = 'active' and 'members.read' = any(manager.permissions)
          and (manager.role = 'owner' or (manager.role = 'admin' and elsewhere.role <> 'owner'))
      )
  ) as beyond_reach`;

export async function listMemberSecondFactors(
  sql: Sql,
  workspaceId: number,
  byUserId: number,
): Promise<MemberSecondFactor[]> {
  return sql<MemberSecondFactor[]>`
    select ${memberSecondFactorColumns(sql, byUserId)}
    from workspace_members m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId}
    order by lower(u.email), m.user_id`;
}

/**
 * Takes the factor of the workspace's member of `email` out of use (its secret goes) and ends
 * every console session of theirs, once `check` (which sees the member as `byUserId` does, and
 * may throw) allows it. The memberships of both users stay locked from the check to the end, so
 * a role changed meanwhile cannot slip past the check; a membership added meanwhile comes after.
 * Undefined when the workspace has no such member; removed false when no factor was in use.
 */
export async function resetMemberTotp(
  sql: Sql,
  input: { workspaceId: number; email: string; byUserId: number },
  check: (member: MemberSecondFactor) => void,
  /** Runs in the same transaction once the factor went (its audit line). */
  alongside: (
    tx: TransactionSql,
    reset: ClearedTotp & { member: MemberSecondFactor },
  ) => Promise<void>,
): Promise<{ member: MemberSecondFactor; removed: boolean; sessionsEnded: number } | undefined> {
  return sql.begin(async (tx) => {
    // In (workspace, user) order, as lockMembers (db/members.ts) takes one workspace's.
    await tx`
      select 1 from workspace_members m join users u on u.id = m.user_id
      where lower(u.email) = lower(${input.email}) or m.user_id = ${input.byUserId}
      order by m.workspace_id, m.user_id
      for update of m`;
    const [member] = await tx<MemberSecondFactor[]>`
      select ${memberSecondFactorColumns(tx, input.byUserId)}
      from workspace_members m join users u on u.id = m.user_id
      where m.workspace_id = ${input.workspaceId} and lower(u.email) = lower(${input.email})`;
    if (!member) return undefined;
    check(member);
    const cleared = await clearTotp(tx, member.userId, null);
    if (cleared.removed) await alongside(tx, { member, ...cleared });
    return { member, ...cleared };
  });
}

/**
 * Takes the user's factor out of use (its secret goes) and ends their console sessions but
 * `keepSessionId`, in one transaction: false, and nothing ended, when no factor was in use.
 */
export async function removeTotp(
  sql: Sql,
  userId: number,
  keepSessionId: number | null,
  /** Runs in the same transaction once the factor went (its audit line). */
  alongside: (tx: TransactionSql, cleared: ClearedTotp) => Promise<void>,
): Promise<ClearedTotp> {
  return sql.begin(async (tx) => {
    const cleared = await clearTotp(tx, userId, keepSessionId);
    if (cleared.removed) await alongside(tx, cleared);
    return cleared;
  });
}

interface ClearedTotp {
  removed: boolean;
  sessionsEnded: number;
}

async function clearTotp(
  tx: TransactionSql,
  userId: number,
  keepSessionId: number | null,
): Promise<ClearedTotp> {
  const cleared = await tx`
    update users set totp_secret = null, totp_enabled_at = null, totp_last_step = null
    where id = ${userId} and totp_enabled_at is not null`;
  if (cleared.count !== 1) return { removed: false, sessionsEnded: 0 };
  return {
    removed: true,
    sessionsEnded: await revokeUserConsoleSessions(tx, userId, keepSessionId),
  };
}
