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
