import type { Role } from '../domain/access.js';
import type { Sql } from './client.js';

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
  sql: Sql,
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

export async function setRequireSecondFactor(
  sql: Sql,
  workspaceId: number,
  required: boolean,
): Promise<void> {
  await sql`update workspaces set require_second_factor = ${required} where id = ${workspaceId}`;
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
}

export async function listMemberSecondFactors(
  sql: Sql,
  workspaceId: number,
): Promise<MemberSecondFactor[]> {
  return sql<MemberSecondFactor[]>`
    select m.user_id, u.email, m.role, m.status, u.totp_enabled_at is not null as enrolled
    from workspace_members m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId}
    order by lower(u.email), m.user_id`;
}

/**
 * Takes the user's factor out of use (its secret goes) and ends their console sessions but
 * `keepSessionId`, in one transaction: false, and nothing ended, when no factor was in use.
 */
export async function removeTotp(
  sql: Sql,
  userId: number,
  keepSessionId: number | null,
): Promise<{ removed: boolean; sessionsEnded: number }> {
  return sql.begin(async (tx) => {
    const cleared = await tx`
      update users set totp_secret = null, totp_enabled_at = null, totp_last_step = null
      where id = ${userId} and totp_enabled_at is not null`;
    if (cleared.count !== 1) return { removed: false, sessionsEnded: 0 };
    const ended = await tx`
      update console_sessions set revoked_at = now()
      where user_id = ${userId} and revoked_at is null and id is distinct from ${keepSessionId}`;
    return { removed: true, sessionsEnded: ended.count };
  });
}
