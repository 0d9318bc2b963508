import type { Sql, TransactionSql } from './client.js';

/** A fencing token: larger than the token of every attempt started before it. */
export async function newLeaseToken(sql: Sql): Promise<number> {
  const [row] = await sql<{ token: number }[]>`select nextval('submission_lease_tokens') as token`;
  return Number(row?.token);
}

/**
 * Takes the lease with a new token when nobody holds it (never held, released or expired): the
 * token in one round trip, or null when someone holds it (then claimLease waits its turn).
 */
export async function claimFreeLease(
  sql: Sql | TransactionSql,
  key: string,
  leaseMs: number,
): Promise<number | null> {
  const [taken] = await sql<{ token: number }[]>`
    insert into submission_leases as l (lease_key, token, expires_at)
    values (${key}, nextval('submission_lease_tokens'),
            clock_timestamp() + make_interval(secs => ${leaseMs / 1000}))
    on conflict (lease_key) do update
      set token = excluded.token, expires_at = excluded.expires_at, wanted_by = null
      where l.token < excluded.token and l.expires_at <= clock_timestamp()
    returning token`;
  return taken ? Number(taken.token) : null;
}

export type LeaseClaim =
  | { held: true }
  /** Someone holds it: `waitMs` until its lease ends, unless it is renewed before then. */
  | { held: false; waitMs: number }
  /** An attempt with a newer token has held it: this attempt is stale and must stop. */
  | { held: false; superseded: true };

/**
 * Takes the lease when it is free, expired, or already this token's; otherwise registers this
 * token as waiting, which stops the holder from renewing if this token is newer.
 */
export async function claimLease(
  sql: Sql,
  key: string,
  token: number,
  leaseMs: number,
): Promise<LeaseClaim> {
  const [taken] = await sql`
    insert into submission_leases as l (lease_key, token, expires_at)
    values (${key}, ${token}, clock_timestamp() + make_interval(secs => ${leaseMs / 1000}))
    on conflict (lease_key) do update
      set token = excluded.token, expires_at = excluded.expires_at, wanted_by = null
      where (l.token = excluded.token and coalesce(l.wanted_by, 0) <= l.token)
         or (l.token < excluded.token and l.expires_at <= clock_timestamp())
    returning 1`;
  if (taken) return { held: true };
  const [holder] = await sql<{ newer: boolean; waitMs: number }[]>`
    update submission_leases set wanted_by = greatest(coalesce(wanted_by, 0), ${token})
    where lease_key = ${key}
    returning token > ${token} as newer,
      greatest(0, extract(epoch from (expires_at - clock_timestamp())) * 1000) as wait_ms`;
  if (!holder) return claimLease(sql, key, token, leaseMs); // released in between
  return holder.newer
    ? { held: false, superseded: true }
    : { held: false, waitMs: Number(holder.waitMs) };
}

/**
 * Extends the holder's lease from now; false when it is no longer this token's, it has expired,
 * or a newer attempt waits for it.
 */
export async function renewLease(sql: Sql, key: string, token: number, leaseMs: number) {
  const result = await sql`
    update submission_leases set expires_at = clock_timestamp() + make_interval(secs => ${leaseMs / 1000})
    where lease_key = ${key} and token = ${token} and expires_at > clock_timestamp()
      and coalesce(wanted_by, 0) <= token`;
  return result.count === 1;
}

/** Ends the lease at once, so a successor need not wait it out; the token stays as the latest. */
export async function releaseLease(sql: Sql, key: string, token: number) {
  await sql`
    update submission_leases set expires_at = clock_timestamp()
    where lease_key = ${key} and token = ${token}`;
}

/** Deletes up to `limit` leases over a day past their end (their work is long settled). */
export async function deleteStaleLeases(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from submission_leases
    where lease_key in (
      select lease_key from submission_leases where expires_at < now() - interval '1 day'
      limit ${limit})`;
  return result.count;
}
