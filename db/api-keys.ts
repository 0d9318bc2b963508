import type { Ability } from '../domain/access.js';
import type { GuardOverrides, RequestRate } from '../domain/fraud-guard.js';
import type { Sql, TransactionSql } from './client.js';

export interface ApiKeyRouting {
  routingType: 'direct' | 'failover' | null;
  providerSlug: string | null;
  failoverRouteSlug: string | null;
}

export interface ApiKeyPrincipal extends ApiKeyRouting {
  keyId: number;
  /** The key's public prefix (`hld_ab12cd34`): how the audit log names it. */
  prefix: string;
  workspaceId: number;
  userId: number | null;
  abilities: Ability[];
  lastUsedAt: Date | null;
  /**
   * The workspace's fraud guard overrides, read with the key so a send need not read them again;
   * absent where no key was read.
   */
  guardSettings?: GuardOverrides | null;
}

export async function insertApiKey(
  sql: Sql | TransactionSql,
  input: ApiKeyRouting & {
    workspaceId: number;
    userId: number | null;
    name: string | null;
    prefix: string;
    tokenHash: Buffer;
    abilities: readonly Ability[];
    /** The key's own request rate; null: its workspace's key rate. */
    rateLimit?: KeyRate;
  },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into api_keys (workspace_id, user_id, name, prefix, token_hash, abilities,
                          routing_type, provider_slug, failover_route_slug, rate_limit)
    values (${input.workspaceId}, ${input.userId}, ${input.name}, ${input.prefix}, ${input.tokenHash},
            ${input.abilities as string[]}, ${input.routingType}, ${input.providerSlug},
            ${input.failoverRouteSlug}, ${rateJson(sql, input.rateLimit ?? null)})
    returning id`;
  return row as { id: number };
}

/** A key's own rate as api_keys.rate_limit holds it: `{requests, perSeconds}`, `"off"` or null. */
export type KeyRate = RequestRate | 'off' | null;

const rateJson = (sql: Sql | TransactionSql, rate: KeyRate) =>
  rate === null ? null : sql.json(rate as Parameters<typeof sql.json>[0]);

/** Sets a live key's own rate (null: back to its workspace's key rate), in `workspaceId` if given. */
export async function updateApiKeyRate(
  sql: Sql | TransactionSql,
  keyId: number,
  rate: KeyRate,
  workspaceId?: number,
): Promise<{
  outcome: 'updated' | 'revoked' | 'not_found';
  workspaceId?: number;
  prefix?: string;
}> {
  const [row] = await sql<{ updated: boolean; workspaceId: number; prefix: string }[]>`
    with target as (
      select id, revoked_at, workspace_id, prefix from api_keys
      where id = ${keyId} ${workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`}),
    updated as (
      update api_keys set rate_limit = ${rateJson(sql, rate)}
      where id in (select id from target where revoked_at is null)
      returning id
    )
    select exists (select 1 from updated) as updated, workspace_id, prefix from target`;
  if (!row) return { outcome: 'not_found' };
  const outcome = row.updated ? 'updated' : 'revoked';
  return { outcome, workspaceId: row.workspaceId, prefix: row.prefix };
}

/**
 * The live key stored under any hash of its token (each key of HERALD_SECRET's ring, current or
 * legacy scheme: security/tokens.ts keyedHashCandidates): not revoked, workspace entitled to the
 * API, and its user (when it has one) still an active member of the key's workspace; with the hash it is stored under. Read on every
 * request, never cached, so a suspension or removal counts from the next request.
 */
/** What authentication reads beside the principal: the hash it matched, and the key's rates. */
export interface ActiveApiKey extends ApiKeyPrincipal {
  tokenHash: Buffer;
  /** The key's own rate, if it has one (else its workspace's key rate). */
  rateLimit: KeyRate;
  guardSettings: GuardOverrides | null;
}

export async function findActiveApiKey(
  sql: Sql,
  tokenHashes: readonly Buffer[],
): Promise<ActiveApiKey | undefined> {
  const [key] = await sql<ActiveApiKey[]>`
    select k.id as key_id, k.prefix, k.workspace_id, k.user_id, k.abilities, k.routing_type,
           k.provider_slug, k.failover_route_slug, k.last_used_at, k.token_hash, k.rate_limit,
           (select g.settings from guard_settings g
            where g.workspace_id = k.workspace_id and g.otp_service_id is null) as guard_settings
    from api_keys k
    join workspaces w on w.id = k.workspace_id
    where k.token_hash in ${sql([...tokenHashes])}
      and k.revoked_at is null and w.api_enabled
      and (k.user_id is null or exists (
        select 1 from workspace_members m
        where m.workspace_id = k.workspace_id and m.user_id = k.user_id and m.status = 'active'))`;
  return key;
}

/** Stores a key's hash under the newest key's scheme once a request has shown its token. */
export async function upgradeApiKeyHash(
  sql: Sql,
  keyId: number,
  from: Buffer,
  to: Buffer,
): Promise<void> {
  await sql`update api_keys set token_hash = ${to} where id = ${keyId} and token_hash = ${from}`;
}

/** Recorded at most once a minute per key so authentication stays a single read. */
export async function touchApiKey(sql: Sql, keyId: number): Promise<void> {
  await sql`
    update api_keys set last_used_at = now()
    where id = ${keyId} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
}

export interface ApiKeyListing extends ApiKeyRouting {
  id: number;
  name: string | null;
  prefix: string;
  abilities: Ability[];
  userEmail: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** The workspace's keys, live ones first, newest first within each. */
export async function listApiKeys(sql: Sql, workspaceId: number): Promise<ApiKeyListing[]> {
  return sql<ApiKeyListing[]>`
    select k.id, k.name, k.prefix, k.abilities, k.routing_type, k.provider_slug,
           k.failover_route_slug, u.email as user_email, k.created_at, k.last_used_at, k.revoked_at
    from api_keys k left join users u on u.id = k.user_id
    where k.workspace_id = ${workspaceId}
    order by k.revoked_at is not null, k.id desc`;
}

/** `workspaceId`, when given, confines the revocation to that workspace's keys. */
export async function revokeApiKey(
  sql: Sql | TransactionSql,
  keyId: number,
  workspaceId?: number,
): Promise<{
  outcome: 'revoked' | 'already_revoked' | 'not_found';
  workspaceId?: number;
  prefix?: string;
}> {
  const [row] = await sql<{ revoked: boolean; workspaceId: number; prefix: string }[]>`
    with target as (
      select id, revoked_at, workspace_id, prefix from api_keys
      where id = ${keyId} ${workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`}
      for update),
    updated as (
      update api_keys set revoked_at = now()
      where id in (select id from target where revoked_at is null)
      returning id
    )
    select exists (select 1 from updated) as revoked, workspace_id, prefix from target`;
  if (!row) return { outcome: 'not_found' };
  const outcome = row.revoked ? 'revoked' : 'already_revoked';
  return { outcome, workspaceId: row.workspaceId, prefix: row.prefix };
}

/** Revokes the live keys of a member leaving the workspace, so that rejoining revives none. */
export async function revokeMemberApiKeys(
  tx: TransactionSql,
  workspaceId: number,
  userId: number,
): Promise<number> {
  const revoked = await tx`
    update api_keys set revoked_at = now()
    where workspace_id = ${workspaceId} and user_id = ${userId} and revoked_at is null`;
  return revoked.count;
}
