import type { Sql } from './client.js';

export interface ProviderRecord {
  id: number;
  slug: string;
  name: string;
  type: 'simulator';
  active: boolean;
  requiresSenderId: boolean;
  settings: { base_url?: string };
}

export interface FailoverRouteRecord {
  id: number;
  slug: string;
  enabled: boolean;
  providerSlugs: string[];
}

export async function findProvider(
  sql: Sql,
  workspaceId: number,
  slug: string,
): Promise<ProviderRecord | undefined> {
  const [provider] = await sql<ProviderRecord[]>`
    select id, slug, name, type, active, requires_sender_id, settings
    from providers where workspace_id = ${workspaceId} and slug = ${slug}`;
  return provider;
}

export async function findProviders(
  sql: Sql,
  workspaceId: number,
  slugs: string[],
): Promise<ProviderRecord[]> {
  return sql<ProviderRecord[]>`
    select id, slug, name, type, active, requires_sender_id, settings
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
  sql: Sql,
  input: {
    workspaceId: number;
    slug: string;
    name: string;
    type: 'simulator';
    requiresSenderId: boolean;
    settings: Record<string, string>;
  },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into providers (workspace_id, slug, name, type, requires_sender_id, settings)
    values (${input.workspaceId}, ${input.slug}, ${input.name}, ${input.type},
            ${input.requiresSenderId}, ${sql.json(input.settings)})
    returning id`;
  return row as { id: number };
}

export async function setProviderActive(
  sql: Sql,
  workspaceId: number,
  slug: string,
  active: boolean,
) {
  const result = await sql`
    update providers set active = ${active} where workspace_id = ${workspaceId} and slug = ${slug}`;
  return result.count > 0;
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
