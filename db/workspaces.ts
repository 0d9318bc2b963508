import type { Sql, TransactionSql } from './client.js';

export interface Workspace {
  id: number;
  slug: string;
  name: string;
  apiEnabled: boolean;
  createdAt: Date;
}

export async function insertWorkspace(
  sql: Sql | TransactionSql,
  input: { slug: string; name: string },
): Promise<Workspace> {
  const [workspace] = await sql<Workspace[]>`
    insert into workspaces (slug, name) values (${input.slug}, ${input.name})
    returning id, slug, name, api_enabled, created_at`;
  return workspace as Workspace;
}

/** The slug of a workspace known by id (a refusal names it). */
export async function findWorkspaceSlug(sql: Sql, id: number): Promise<string | undefined> {
  const [row] = await sql<{ slug: string }[]>`select slug from workspaces where id = ${id}`;
  return row?.slug;
}

/** Every workspace, by slug (the CLI's `workspace list`). */
export async function listWorkspaces(sql: Sql): Promise<Workspace[]> {
  return sql<Workspace[]>`
    select id, slug, name, api_enabled, created_at from workspaces order by slug`;
}

export async function findWorkspaceBySlug(sql: Sql, slug: string): Promise<Workspace | undefined> {
  const [workspace] = await sql<Workspace[]>`
    select id, slug, name, api_enabled, created_at from workspaces where slug = ${slug}`;
  return workspace;
}

/** Renames the workspace and/or sets its API entitlement; unspecified fields keep their value. */
export async function updateWorkspace(
  sql: Sql | TransactionSql,
  slug: string,
  changes: { name?: string; apiEnabled?: boolean },
): Promise<Workspace | undefined> {
  const [workspace] = await sql<Workspace[]>`
    update workspaces
    set name = coalesce(${changes.name ?? null}, name),
        api_enabled = coalesce(${changes.apiEnabled ?? null}::boolean, api_enabled)
    where slug = ${slug}
    returning id, slug, name, api_enabled, created_at`;
  return workspace;
}
