import type { Permission, Standing } from '../domain/access.js';
import { type RowLock, rowLock, type Sql, type TransactionSql } from './client.js';

export interface WorkspaceChoice {
  id: number;
  slug: string;
  name: string;
}

/** The workspaces a user can sign in to: active memberships. */
export async function findSignInWorkspaces(sql: Sql, userId: number): Promise<WorkspaceChoice[]> {
  return sql<WorkspaceChoice[]>`
    select w.id, w.slug, w.name from workspace_members m join workspaces w on w.id = m.workspace_id
    where m.user_id = ${userId} and m.status = 'active'
    order by w.name, w.id`;
}

export interface MemberAccess {
  workspaceName: string;
  apiEnabled: boolean;
  /** Null when the user is no longer a member. */
  status: 'active' | 'suspended' | null;
  permissions: Permission[];
}

/** Read on every MCP call, so a permission removed after sign-in counts on the next call. */
export async function findMemberAccess(
  sql: Sql,
  workspaceId: number,
  userId: number,
): Promise<MemberAccess | undefined> {
  const [row] = await sql<MemberAccess[]>`
    select w.name as workspace_name, w.api_enabled, m.status, coalesce(m.permissions, '{}') as permissions
    from workspaces w
    left join workspace_members m on m.workspace_id = w.id and m.user_id = ${userId}
    where w.id = ${workspaceId}`;
  return row;
}

/** A member's role, permissions and status in a workspace; undefined when they are not one. */
export async function findMemberStanding(
  sql: Sql | TransactionSql,
  workspaceId: number,
  userId: number,
  lock?: RowLock,
): Promise<Standing | undefined> {
  const [row] = await sql<Standing[]>`
    select role, permissions, status from workspace_members
    where workspace_id = ${workspaceId} and user_id = ${userId}
    ${rowLock(sql, lock)}`;
  return row;
}
