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
  /** The workspace requires a second factor of every member. */
  requireSecondFactor: boolean;
  /** The user has set one up. */
  totpEnabled: boolean;
}

/**
 * Read on every MCP call and refresh, so a permission removed or a second factor required after
 * sign-in counts on the next one.
 */
export async function findMemberAccess(
  sql: Sql,
  workspaceId: number,
  userId: number,
): Promise<MemberAccess | undefined> {
  const [row] = await sql<MemberAccess[]>`
    select w.name as workspace_name, w.api_enabled, m.status, coalesce(m.permissions, '{}') as permissions,
           w.require_second_factor,
           coalesce((select u.totp_enabled_at is not null from users u where u.id = ${userId}), false)
             as totp_enabled
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
