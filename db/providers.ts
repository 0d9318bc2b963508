import type { Sql, TransactionSql } from './client.js';

export const PROVIDER_TYPES = ['simulator', 'twilio', 'smpp'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

export interface ProviderRecord {
  id: number;
  workspaceId: number;
  slug: string;
  name: string;
  type: ProviderType;
  active: boolean;
  requiresSenderId: boolean;
  /** Null: the adapter's default. */
  messagesPerSecond: number | null;
  /** Non-secret settings: base URL, default sender, messaging service; an SMPP host and bind. */
  settings: {
    base_url?: string;
    from?: string;
    messaging_service_sid?: string;
    /** ISO 3166 alpha-2 codes, comma-separated; absent: every country. */
    countries?: string;
    host?: string;
    port?: string;
    system_type?: string;
    source_addr?: string;
    window?: string;
  };
  /** AES-256-GCM ciphertext (security/credentials.ts); never logged or returned. */
  credentials: Uint8Array | null;
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

export async function insertProvider(
  sql: Sql | TransactionSql,
  input: {
    workspaceId: number;
    slug: string;
    name: string;
    type: ProviderType;
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

/**
 * Serialises the commands that give an SMSC account to a provider (create, enable) until the
 * transaction ends: the account's system id is encrypted, so no unique index can keep two
 * providers from sharing it.
 */
export async function lockSmscAccounts(tx: TransactionSql): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('smsc-accounts'))`;
}

/** An active SMPP provider of any workspace, with its workspace's slug. */
export interface SmscAccountHolder {
  id: number;
  workspaceId: number;
  workspaceSlug: string;
  slug: string;
  settings: ProviderRecord['settings'];
  credentials: Uint8Array | null;
}

/** The active SMPP providers of every workspace: those that hold (or will hold) a bind. */
export async function findSmscAccountHolders(
  sql: Sql | TransactionSql,
): Promise<SmscAccountHolder[]> {
  return sql<SmscAccountHolder[]>`
    select p.id, p.workspace_id, w.slug as workspace_slug, p.slug, p.settings, p.credentials
    from providers p join workspaces w on w.id = p.workspace_id
    where p.type = 'smpp' and p.active
    order by p.id`;
}

export async function insertFailoverRoute(
  sql: Sql,
  input: { workspaceId: number; slug: string; name: string; providerSlugs: string[] },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into failover_routes (workspace_id, slug, name, provider_slugs)
    values (${input.workspaceId}, ${input.slug}, ${input.name}, ${input.providerSlugs})
    returning id`;
  return row as { id: number };
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
