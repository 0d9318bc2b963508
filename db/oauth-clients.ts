import type { Sql, TransactionSql } from './client.js';

export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: 'none' | 'client_secret_post';
  secretHash: Buffer | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export type NewClient = Omit<OAuthClient, 'createdAt'> & { registeredFrom: string };

export async function insertClient(
  sql: Sql | TransactionSql,
  client: NewClient,
): Promise<OAuthClient> {
  // clock_timestamp, not the transaction's start: registrations are ordered by when they were made.
  const [row] = await sql<OAuthClient[]>`
    insert into oauth_clients (id, name, redirect_uris, token_endpoint_auth_method, secret_hash,
                               metadata, registered_from, created_at)
    values (${client.id}, ${client.name}, ${client.redirectUris}, ${client.tokenEndpointAuthMethod},
            ${client.secretHash}, ${sql.json(client.metadata as Parameters<Sql['json']>[0])},
            ${client.registeredFrom}, clock_timestamp())
    returning id, name, redirect_uris, token_endpoint_auth_method, secret_hash, metadata, created_at`;
  return row as OAuthClient;
}

/** How many registrations that never completed consent may be kept. */
export interface UnconsentedCaps {
  /** From one client address. */
  perAddress: number;
  /** In the whole installation (its one authorization server serves every workspace). */
  total: number;
}

/** Registrations wait for each other here, so that the caps are exact under concurrency. */
export async function lockClientRegistrations(tx: TransactionSql): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('oauth-clients:unconsented'))`;
}

const unconsented = (tx: TransactionSql) =>
  tx`not exists (select 1 from oauth_connections k where k.client_id = c.id)`;

/**
 * Deletes the oldest registrations without a connection (consent never completed) beyond `cap`,
 * among those from `address` or, when it is null, all. One being consented at this moment
 * (its connection's insert holds the row) is skipped, never dropped. Returns how many went.
 */
async function dropOldestUnconsented(
  tx: TransactionSql,
  address: string | null,
  cap: number,
): Promise<number> {
  const fromAddress = address === null ? tx`true` : tx`c.registered_from = ${address}`;
  const [row] = await tx<{ count: number }[]>`
    select count(*)::int as count from oauth_clients c where ${fromAddress} and ${unconsented(tx)}`;
  const excess = (row?.count ?? 0) - cap;
  if (excess <= 0) return 0;
  const result = await tx`
    delete from oauth_clients where id in (
      select c.id from oauth_clients c where ${fromAddress} and ${unconsented(tx)}
      order by c.created_at, c.id limit ${excess}
      for update skip locked)`;
  return result.count;
}

/**
 * Stores a registration and keeps what never completed consent within `caps`, the oldest dropped
 * first, in the caller's transaction: `registerClient` (mcp/oauth/registration.ts) runs it in
 * one of its own, so no concurrent registration sees the counts before this one is in.
 */
export async function insertClientWithinCaps(
  tx: TransactionSql,
  client: NewClient,
  caps: UnconsentedCaps,
): Promise<OAuthClient> {
  await lockClientRegistrations(tx);
  const row = await insertClient(tx, client);
  await dropOldestUnconsented(tx, client.registeredFrom, caps.perAddress);
  await dropOldestUnconsented(tx, null, caps.total);
  return row;
}

export async function findClient(sql: Sql, id: string): Promise<OAuthClient | undefined> {
  const [row] = await sql<OAuthClient[]>`
    select id, name, redirect_uris, token_endpoint_auth_method, secret_hash, metadata, created_at
    from oauth_clients where id = ${id}`;
  return row;
}

/** Stores a client's secret hash under HERALD_SECRET's newest key once the client has shown it. */
export async function upgradeClientSecretHash(
  sql: Sql,
  id: string,
  from: Uint8Array,
  to: Buffer,
): Promise<void> {
  await sql`update oauth_clients set secret_hash = ${to} where id = ${id} and secret_hash = ${from}`;
}

export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/** Sliding-window limit on registrations from one address, shared by every api process. */
export async function admitRegistration(
  sql: Sql,
  ip: string,
  limit: number,
  windowSeconds: number,
): Promise<Admission> {
  return sql.begin(async (tx) => {
    // One address at a time, so concurrent attempts cannot all see a count under the limit.
    await tx`select pg_advisory_xact_lock(hashtext('oauth-registration:' || ${ip}))`;
    await tx`delete from oauth_registration_attempts
             where ip = ${ip} and at <= now() - make_interval(secs => ${windowSeconds})`;
    const [row] = await tx<{ count: number; retryAfter: number | null }[]>`
      select count(*)::int as count,
        ceil(extract(epoch from min(at) + make_interval(secs => ${windowSeconds}) - now()))::int
          as retry_after
      from oauth_registration_attempts where ip = ${ip}`;
    if ((row?.count ?? 0) >= limit) {
      return { admitted: false, retryAfterSeconds: Math.max(1, row?.retryAfter ?? 1) };
    }
    await tx`insert into oauth_registration_attempts (ip) values (${ip})`;
    return { admitted: true };
  });
}

/** Registrations that never completed consent within `days` days; clients with any connection stay. */
export async function deleteAbandonedClients(
  sql: Sql,
  days: number,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from oauth_clients where id in (
      select c.id from oauth_clients c
      where c.created_at < now() - make_interval(days => ${days})
        and not exists (select 1 from oauth_connections k where k.client_id = c.id)
      limit ${limit})`;
  return result.count;
}

/** Registration attempts made more than `olderThanSeconds` ago, up to `limit`; returns how many. */
export async function deleteOldRegistrationAttempts(
  sql: Sql,
  olderThanSeconds: number,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from oauth_registration_attempts where ctid in (
      select ctid from oauth_registration_attempts
      where at < now() - make_interval(secs => ${olderThanSeconds}) limit ${limit})`;
  return result.count;
}
