import type { Sql } from './client.js';

/** What a form may offer as routing: the workspace's providers and failover routes. */

export interface ProviderChoice {
  slug: string;
  name: string;
  active: boolean;
}

export interface FailoverRouteChoice {
  slug: string;
  name: string;
  enabled: boolean;
  providerSlugs: string[];
}

export async function listProviderChoices(sql: Sql, workspaceId: number) {
  return sql<ProviderChoice[]>`
    select slug, name, active from providers where workspace_id = ${workspaceId} order by slug`;
}

export async function listFailoverRouteChoices(sql: Sql, workspaceId: number) {
  return sql<FailoverRouteChoice[]>`
    select slug, name, enabled, provider_slugs from failover_routes
    where workspace_id = ${workspaceId} order by slug`;
}
