import type { Sql, TransactionSql } from './client.js';

/** MCP connections as operators see them (`herald mcp connections list|revoke`). */

export interface ConnectionListing {
  id: number;
  workspace: string;
  user: string;
  clientId: string;
  clientName: string;
  scope: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Every connection, revoked ones included, oldest first; optionally one workspace's or user's. */
export async function listConnections(
  sql: Sql,
  filter: { workspaceId?: number; userId?: number } = {},
): Promise<ConnectionListing[]> {
  return sql<ConnectionListing[]>`
    select k.id, w.slug as workspace, u.email as user, k.client_id, c.name as client_name,
           k.scope, k.created_at, k.last_used_at, k.revoked_at
    from oauth_connections k
    join workspaces w on w.id = k.workspace_id
    join users u on u.id = k.user_id
    join oauth_clients c on c.id = k.client_id
    where true
      ${filter.workspaceId === undefined ? sql`` : sql`and k.workspace_id = ${filter.workspaceId}`}
      ${filter.userId === undefined ? sql`` : sql`and k.user_id = ${filter.userId}`}
    order by k.id`;
}

/**
 * Revokes the connection and, in the same transaction, every access and refresh token issued
 * under it, so both stop working at once (docs/spec.md §5.2.6).
 */
export async function revokeConnection(
  sql: Sql,
  id: number,
  /** Runs in the revoking transaction (its audit line), given what the connection was. */
  alongside?: (tx: TransactionSql, revoked: RevokedConnection) => Promise<void>,
): Promise<'revoked' | 'already_revoked' | 'not_found'> {
  return sql.begin(async (tx) => {
    const [connection] = await tx<(RevokedConnection & { revokedAt: Date | null })[]>`
      select k.revoked_at, k.workspace_id, c.name as client_name, u.email as user
      from oauth_connections k
      join oauth_clients c on c.id = k.client_id
      join users u on u.id = k.user_id
      where k.id = ${id} for update of k`;
    if (!connection) return 'not_found';
    if (connection.revokedAt) return 'already_revoked';
    await tx`update oauth_connections set revoked_at = now() where id = ${id}`;
    await tx`
      update oauth_tokens set revoked_at = coalesce(revoked_at, now()) where connection_id = ${id}`;
    await alongside?.(tx, connection);
    return 'revoked';
  });
}

export interface RevokedConnection {
  workspaceId: number;
  clientName: string;
  user: string;
}

/** Within the caller's transaction: revokes a user's live connections to one workspace. */
export async function revokeMemberConnections(
  tx: TransactionSql,
  workspaceId: number,
  userId: number,
): Promise<number> {
  await tx`
    update oauth_tokens set revoked_at = coalesce(revoked_at, now())
    where connection_id in (
      select id from oauth_connections
      where workspace_id = ${workspaceId} and user_id = ${userId} and revoked_at is null)`;
  const revoked = await tx`
    update oauth_connections set revoked_at = now()
    where workspace_id = ${workspaceId} and user_id = ${userId} and revoked_at is null`;
  return revoked.count;
}
