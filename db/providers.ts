import type { StoredProvider } from '../domain/provider-definition.js';
import type { Sql, TransactionSql } from './client.js';

/**
 * A workspace provider. Its type is one of the provider definitions the composition roots hand
 * in (providers/registry.ts); its settings are read by that type's schema.
 */
export interface ProviderRecord extends StoredProvider {
  name: string;
}

export interface FailoverRouteRecord {
  id: number;
  slug: string;
  enabled: boolean;
  providerSlugs: string[];
}

export async function findProvider(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
): Promise<ProviderRecord | undefined> {
  const [provider] = await sql<ProviderRecord[]>`
    select id, workspace_id, slug, name, type, active, requires_sender_id, messages_per_second,
      settings, credentials
    from providers where workspace_id = ${workspaceId} and slug = ${slug}`;
  return provider;
}

export async function findProviders(
  sql: Sql,
  workspaceId: number,
  slugs: string[],
): Promise<ProviderRecord[]> {
  return sql<ProviderRecord[]>`
    select id, workspace_id, slug, name, type, active, requires_sender_id, messages_per_second,
      settings, credentials
    from providers where workspace_id = ${workspaceId} and slug = any(${slugs})`;
}

/**
 * The stored providers a campaign may be submitted through: its own, or its failover route's;
 * read beside the campaign (findCampaignForSubmission), not after it.
 */
export async function findCampaignProviders(
  sql: Sql | TransactionSql,
  campaignId: number,
): Promise<ProviderRecord[]> {
  return sql<ProviderRecord[]>`
    select p.id, p.workspace_id, p.slug, p.name, p.type, p.active, p.requires_sender_id,
      p.messages_per_second, p.settings, p.credentials
    from campaigns c
    left join failover_routes r on c.routing_type = 'failover'
      and r.workspace_id = c.workspace_id and r.slug = c.failover_route_slug
    join providers p on p.workspace_id = c.workspace_id and p.slug = any(
      case when c.routing_type = 'failover' then r.provider_slugs else array[c.provider_slug] end)
    where c.id = ${campaignId}`;
}

export async function findFailoverRoute(
  sql: Sql,
  workspaceId: number,
  slug: string,
): Promise<FailoverRouteRecord | undefined> {
  const [route] = await sql<FailoverRouteRecord[]>`
    select id, slug, enabled, provider_slugs
    from failover_routes where workspace_id = ${workspaceId} and slug = ${slug}`;
  return route;
}

/** A provider as listed: no settings, no credentials. */
export interface ProviderListing {
  id: number;
  slug: string;
  name: string;
  type: string;
  active: boolean;
  requiresSenderId: boolean;
  messagesPerSecond: number | null;
  createdAt: Date;
}

/** The workspace's providers, by slug; never their settings or credentials. */
export async function listProviders(sql: Sql, workspaceId: number): Promise<ProviderListing[]> {
  return sql<ProviderListing[]>`
    select id, slug, name, type, active, requires_sender_id, messages_per_second, created_at
    from providers where workspace_id = ${workspaceId} order by slug`;
}

export interface FailoverRouteListing extends FailoverRouteRecord {
  name: string;
  createdAt: Date;
}

/** The workspace's failover routes, by slug. */
export async function listFailoverRoutes(
  sql: Sql,
  workspaceId: number,
): Promise<FailoverRouteListing[]> {
  return sql<FailoverRouteListing[]>`
    select id, slug, name, enabled, provider_slugs, created_at
    from failover_routes where workspace_id = ${workspaceId} order by slug`;
}

export async function insertProvider(
  sql: Sql | TransactionSql,
  input: {
    workspaceId: number;
    slug: string;
    name: string;
    type: string;
    requiresSenderId: boolean;
    messagesPerSecond?: number | null;
    settings: Record<string, string>;
    /** Already encrypted (security/credentials.ts). */
    credentials?: Buffer | null;
  },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into providers (workspace_id, slug, name, type, requires_sender_id, messages_per_second,
                           settings, credentials)
    values (${input.workspaceId}, ${input.slug}, ${input.name}, ${input.type},
            ${input.requiresSenderId}, ${input.messagesPerSecond ?? null}, ${sql.json(input.settings)},
            ${input.credentials ?? null})
    returning id`;
  return row as { id: number };
}

export async function setProviderActive(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
  active: boolean,
) {
  const result = await sql`
    update providers set active = ${active} where workspace_id = ${workspaceId} and slug = ${slug}`;
  return result.count > 0;
}

/** A provider's edit: everything but its slug and type; `credentials` already encrypted. */
export async function updateProvider(
  sql: Sql | TransactionSql,
  input: {
    id: number;
    name: string;
    requiresSenderId: boolean;
    messagesPerSecond: number | null;
    settings: Record<string, string>;
    credentials: Buffer | null;
  },
): Promise<void> {
  await sql`
    update providers set name = ${input.name}, requires_sender_id = ${input.requiresSenderId},
      messages_per_second = ${input.messagesPerSecond}, settings = ${sql.json(input.settings)},
      credentials = ${input.credentials}
    where id = ${input.id}`;
}

/**
 * Serialises the commands that give an SMSC account to a provider (create, enable) until the
 * transaction ends: the account's system id is encrypted, so no unique index can keep two
 * providers from sharing it.
 */
export async function lockSmscAccounts(tx: TransactionSql): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('smsc-accounts'))`;
}

/** An active provider of any workspace, with its workspace's slug. */
export interface AccountHolder {
  id: number;
  type: string;
  workspaceId: number;
  workspaceSlug: string;
  slug: string;
  settings: ProviderRecord['settings'];
  credentials: Uint8Array | null;
}

/**
 * The active providers of `types` in every workspace: of a type whose account one provider holds
 * alone (SMPP: those that hold, or will hold, a bind).
 */
export async function findAccountHolders(
  sql: Sql | TransactionSql,
  types: readonly string[],
): Promise<AccountHolder[]> {
  return sql<AccountHolder[]>`
    select p.id, p.type, p.workspace_id, w.slug as workspace_slug, p.slug, p.settings, p.credentials
    from providers p join workspaces w on w.id = p.workspace_id
    where p.type = any(${types as string[]}) and p.active
    order by p.id`;
}

export async function insertFailoverRoute(
  sql: Sql | TransactionSql,
  input: { workspaceId: number; slug: string; name: string; providerSlugs: string[] },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into failover_routes (workspace_id, slug, name, provider_slugs)
    values (${input.workspaceId}, ${input.slug}, ${input.name}, ${input.providerSlugs})
    returning id`;
  return row as { id: number };
}

/** A route's new name and provider order; false when the workspace has no such route. */
export async function updateFailoverRoute(
  sql: Sql | TransactionSql,
  input: { workspaceId: number; slug: string; name: string; providerSlugs: string[] },
): Promise<boolean> {
  const result = await sql`
    update failover_routes set name = ${input.name}, provider_slugs = ${input.providerSlugs}
    where workspace_id = ${input.workspaceId} and slug = ${input.slug}`;
  return result.count > 0;
}

export async function deleteFailoverRoute(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
): Promise<boolean> {
  const result = await sql`
    delete from failover_routes where workspace_id = ${workspaceId} and slug = ${slug}`;
  return result.count > 0;
}

/** The prefixes of the workspace's unrevoked API keys that send through the route. */
export async function findKeysRoutedTo(
  sql: Sql | TransactionSql,
  workspaceId: number,
  routeSlug: string,
): Promise<string[]> {
  const rows = await sql<{ prefix: string }[]>`
    select prefix from api_keys
    where workspace_id = ${workspaceId} and failover_route_slug = ${routeSlug}
      and revoked_at is null
    order by id`;
  return rows.map((row) => row.prefix);
}

/** The workspace a message reference (`cmp-<campaign>-<seq>`, `otp-<uuid>`) belongs to. */
export async function findReferenceWorkspace(
  sql: Sql,
  target: { campaignId: number } | { otpRequestId: string },
): Promise<number | undefined> {
  const [row] =
    'campaignId' in target
      ? await sql<{ workspaceId: number }[]>`
          select workspace_id from campaigns where id = ${target.campaignId}`
      : await sql<{ workspaceId: number }[]>`
          select workspace_id from otp_requests where id = ${target.otpRequestId}`;
  return row?.workspaceId;
}
