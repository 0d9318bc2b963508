import type { Sql, TransactionSql } from './client.js';

/** The authorization flow's records: pending requests, connections, codes and tokens. */

export interface PendingAuthorization {
  id: string;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  scope: string;
  resource: string;
  userId: number | null;
  workspaceId: number | null;
  browserHash: Buffer | null;
  /** Signed in with the password; the TOTP code is still due (migration 0014). */
  secondFactorPending?: boolean;
}

/** An authorization request at sign-in: stored only once a user signed in, bound to them. */
export async function insertAuthorization(
  sql: Sql,
  request: Omit<PendingAuthorization, 'id' | 'userId' | 'browserHash'> & {
    userId: number;
    browserHash: Buffer;
  },
  lifetimeSeconds: number,
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into oauth_authorizations (client_id, redirect_uri, state, code_challenge, scope,
                                      resource, user_id, workspace_id, browser_hash, expires_at,
                                      second_factor_pending)
    values (${request.clientId}, ${request.redirectUri}, ${request.state}, ${request.codeChallenge},
            ${request.scope}, ${request.resource}, ${request.userId}, ${request.workspaceId},
            ${request.browserHash}, now() + make_interval(secs => ${lifetimeSeconds}),
            ${request.secondFactorPending ?? false})
    returning id`;
  return (row as { id: string }).id;
}

export async function findAuthorization(
  sql: Sql,
  id: string,
): Promise<PendingAuthorization | undefined> {
  const [row] = await sql<PendingAuthorization[]>`
    select id, client_id, redirect_uri, state, code_challenge, scope, resource, user_id,
           workspace_id, browser_hash, second_factor_pending
    from oauth_authorizations
    where id = ${id} and expires_at > now()`;
  return row;
}

/** The TOTP code was right: the request goes on to the workspace choice and consent. */
export async function completeAuthorizationSecondFactor(sql: Sql, id: string): Promise<void> {
  await sql`update oauth_authorizations set second_factor_pending = false where id = ${id}`;
}

export async function chooseWorkspace(sql: Sql, id: string, workspaceId: number): Promise<void> {
  await sql`update oauth_authorizations set workspace_id = ${workspaceId} where id = ${id}`;
}

/**
 * Approval: the connection of this user, workspace and client (reused while active), and a
 * single-use code bound to it, the callback, the PKCE challenge and the resource.
 */
export async function approveAuthorization(
  sql: Sql,
  authorization: PendingAuthorization & { userId: number; workspaceId: number },
  code: { hash: Buffer; lifetimeSeconds: number },
): Promise<boolean> {
  return sql.begin(async (tx) => {
    // Deciding consumes the request: a second approval of the same request finds nothing.
    const [deleted] = await tx`
      delete from oauth_authorizations where id = ${authorization.id} returning id`;
    if (!deleted) return false;
    const [existing] = await tx<{ id: number }[]>`
      update oauth_connections set scope = ${authorization.scope}
      where workspace_id = ${authorization.workspaceId} and user_id = ${authorization.userId}
        and client_id = ${authorization.clientId} and revoked_at is null
      returning id`;
    const connectionId =
      existing?.id ??
      (
        await tx<{ id: number }[]>`
          insert into oauth_connections (workspace_id, user_id, client_id, scope)
          values (${authorization.workspaceId}, ${authorization.userId}, ${authorization.clientId},
                  ${authorization.scope})
          returning id`
      )[0]?.id;
    await tx`
      insert into oauth_codes (code_hash, connection_id, redirect_uri, code_challenge, resource,
                               scope, expires_at)
      values (${code.hash}, ${connectionId as number}, ${authorization.redirectUri},
              ${authorization.codeChallenge}, ${authorization.resource}, ${authorization.scope},
              now() + make_interval(secs => ${code.lifetimeSeconds}))`;
    return true;
  });
}

export async function deleteAuthorization(sql: Sql, id: string): Promise<void> {
  await sql`delete from oauth_authorizations where id = ${id}`;
}

export interface RedeemedCode {
  connectionId: number;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  family: string;
  expired: boolean;
  /** Already exchanged once: a replay. */
  replayed: boolean;
  connectionRevoked: boolean;
}

/** Marks the code used and returns it as it was; a second redemption comes back `replayed`. */
export async function redeemCode(sql: Sql, hash: Buffer): Promise<RedeemedCode | undefined> {
  const [row] = await sql<RedeemedCode[]>`
    with previous as (
      select code_hash, used_at from oauth_codes where code_hash = ${hash} for update
    )
    update oauth_codes c set used_at = coalesce(c.used_at, now())
    from previous p, oauth_connections k
    where c.code_hash = p.code_hash and k.id = c.connection_id
    returning c.connection_id, k.client_id, c.redirect_uri, c.code_challenge, c.resource, c.scope,
      c.family, c.expires_at <= now() as expired, p.used_at is not null as replayed,
      k.revoked_at is not null as connection_revoked`;
  return row;
}

export interface IssuedTokenRecord {
  hash: Buffer;
  kind: 'access' | 'refresh';
  lifetimeSeconds: number;
}

export async function insertTokens(
  sql: Sql | TransactionSql,
  grant: { connectionId: number; family: string; resource: string; scope: string },
  tokens: IssuedTokenRecord[],
  options: { ifAbsent?: boolean } = {},
): Promise<void> {
  await sql`
    insert into oauth_tokens (token_hash, kind, connection_id, family, resource, scope, expires_at)
    select decode(hash, 'hex'), kind, ${grant.connectionId}, ${grant.family}, ${grant.resource},
           ${grant.scope}, now() + make_interval(secs => lifetime)
    -- postgres.js sends an array of Buffers as one bytea, not bytea[]: the hashes travel as hex.
    from unnest(${tokens.map((token) => token.hash.toString('hex'))}::text[],
                ${tokens.map((token) => token.kind)}::text[],
                ${tokens.map((token) => token.lifetimeSeconds)}::int[]) as t(hash, kind, lifetime)
    ${options.ifAbsent ? sql`on conflict (token_hash) do nothing` : sql``}`;
}

export async function revokeFamily(sql: Sql, family: string): Promise<void> {
  await sql`update oauth_tokens set revoked_at = coalesce(revoked_at, now()) where family = ${family}`;
}

export interface RefreshTokenUse {
  connectionId: number;
  clientId: string;
  workspaceId: number;
  userId: number;
  family: string;
  resource: string;
  scope: string;
  /** Seconds since this refresh token was first exchanged; null before its first use. */
  secondsSinceRotation: number | null;
  usable: boolean;
}

/** A refresh token as it is, read without changing it (the client is checked before any change). */
export async function findRefreshToken(
  sql: Sql,
  hash: Buffer,
): Promise<RefreshTokenUse | undefined> {
  const [row] = await sql<RefreshTokenUse[]>`
    select t.connection_id, k.client_id, k.workspace_id, k.user_id, t.family, t.resource, t.scope,
      extract(epoch from now() - t.rotated_at)::float8 as seconds_since_rotation,
      (t.revoked_at is null and k.revoked_at is null and t.expires_at > now()) as usable
    from oauth_tokens t join oauth_connections k on k.id = t.connection_id
    where t.token_hash = ${hash} and t.kind = 'refresh'`;
  return row;
}

export type Rotation =
  | { outcome: 'rotated'; accessExpiresInSeconds: number }
  | { outcome: 'unusable' }
  /** Exchanged before, longer ago than the grace window. */
  | { outcome: 'replayed' };

/**
 * Exchanges a refresh token for its successor pair: marks it exchanged (the first time) and
 * stores the pair unless it is already stored. The successor is derived from the token, so
 * exchanging it again within `graceSeconds` stores nothing and answers the same pair.
 */
export async function rotateRefreshToken(
  sql: Sql,
  hash: Buffer,
  successor: IssuedTokenRecord[],
  graceSeconds: number,
): Promise<Rotation> {
  return sql.begin(async (tx) => {
    const [token] = await tx<
      (Omit<RefreshTokenUse, 'clientId' | 'workspaceId' | 'userId'> & { usable: boolean })[]
    >`
      select t.connection_id, t.family, t.resource, t.scope,
        extract(epoch from now() - t.rotated_at)::float8 as seconds_since_rotation,
        (t.revoked_at is null and k.revoked_at is null and t.expires_at > now()) as usable
      from oauth_tokens t join oauth_connections k on k.id = t.connection_id
      where t.token_hash = ${hash} and t.kind = 'refresh'
      for update of t`;
    if (!token?.usable) return { outcome: 'unusable' };
    if (token.secondsSinceRotation !== null && token.secondsSinceRotation > graceSeconds) {
      return { outcome: 'replayed' };
    }
    await tx`update oauth_tokens set rotated_at = coalesce(rotated_at, now())
             where token_hash = ${hash}`;
    await insertTokens(tx, token, successor, { ifAbsent: true });
    const [issued] = await tx<{ revoked: boolean; expiresIn: number }[]>`
      select bool_or(revoked_at is not null) as revoked,
        min(ceil(extract(epoch from expires_at - now())))::int as expires_in
      from oauth_tokens
      where token_hash in (
        select decode(hex, 'hex')
        from unnest(${successor.map((token) => token.hash.toString('hex'))}::text[]) as hex)`;
    if (!issued || issued.revoked || issued.expiresIn <= 0) return { outcome: 'unusable' };
    return { outcome: 'rotated', accessExpiresInSeconds: issued.expiresIn };
  });
}

export interface TokenOwner {
  kind: 'access' | 'refresh';
  family: string;
  clientId: string;
}

export async function findTokenOwner(sql: Sql, hash: Buffer): Promise<TokenOwner | undefined> {
  const [row] = await sql<TokenOwner[]>`
    select t.kind, t.family, k.client_id from oauth_tokens t
    join oauth_connections k on k.id = t.connection_id
    where t.token_hash = ${hash}`;
  return row;
}

export async function revokeToken(sql: Sql, hash: Buffer): Promise<void> {
  await sql`update oauth_tokens set revoked_at = coalesce(revoked_at, now()) where token_hash = ${hash}`;
}

export interface AccessGrant {
  connectionId: number;
  workspaceId: number;
  userId: number;
  clientId: string;
  resource: string;
  scope: string;
  lastUsedAt: Date | null;
}

/** A live access token: not expired, not revoked, its connection not revoked. */
export async function findAccessGrant(sql: Sql, hash: Buffer): Promise<AccessGrant | undefined> {
  const [row] = await sql<AccessGrant[]>`
    select k.id as connection_id, k.workspace_id, k.user_id, k.client_id, t.resource, t.scope,
           k.last_used_at
    from oauth_tokens t join oauth_connections k on k.id = t.connection_id
    where t.token_hash = ${hash} and t.kind = 'access' and t.expires_at > now()
      and t.revoked_at is null and k.revoked_at is null`;
  return row;
}

export async function touchConnection(sql: Sql, connectionId: number): Promise<void> {
  await sql`update oauth_connections set last_used_at = now() where id = ${connectionId}`;
}

/**
 * Authorization requests, codes and tokens that expired more than `afterSeconds` ago, up to
 * `limit` rows of each; returns how many went. Until then an expired record still answers for
 * itself (a replayed code still revokes what it obtained, an expired token is told apart).
 */
export async function deleteExpiredGrants(
  sql: Sql,
  afterSeconds: number,
  limit: number,
): Promise<number> {
  const authorizations = await sql`
    delete from oauth_authorizations where id in (
      select id from oauth_authorizations
      where expires_at < now() - make_interval(secs => ${afterSeconds}) limit ${limit})`;
  const codes = await sql`
    delete from oauth_codes where code_hash in (
      select code_hash from oauth_codes
      where expires_at < now() - make_interval(secs => ${afterSeconds}) limit ${limit})`;
  const tokens = await sql`
    delete from oauth_tokens where token_hash in (
      select token_hash from oauth_tokens
      where expires_at < now() - make_interval(secs => ${afterSeconds}) limit ${limit})`;
  return authorizations.count + codes.count + tokens.count;
}
