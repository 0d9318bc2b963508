import type { Sql, TransactionSql } from './client.js';

export interface AuditEntry {
  workspaceId: number | null;
  userId: number | null;
  actor: string;
  source: 'console' | 'cli' | 'guard' | 'api';
  action: string;
  target: string | null;
  details: Record<string, string | number | boolean | null>;
  address: string | null;
  userAgent: string | null;
  /** Where it came from when no address says it: `cli@<hostname>`. */
  origin?: string | null;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  at: Date;
}

export async function insertAuditEntry(
  sql: Sql | TransactionSql,
  entry: AuditEntry,
): Promise<void> {
  await sql`
    insert into audit_log (workspace_id, user_id, actor, source, action, target, details,
                           address, user_agent, origin)
    values (${entry.workspaceId}, ${entry.userId}, ${entry.actor}, ${entry.source},
            ${entry.action}, ${entry.target}, ${sql.json(entry.details)}, ${entry.address},
            ${entry.userAgent}, ${entry.origin ?? null})`;
}

/**
 * Adds facts learnt after the change committed to its line (the newest of that action and target
 * in the workspace): a batch's dispatch is confirmed only once its save, and its line, committed.
 */
export async function amendAuditDetails(
  sql: Sql,
  workspaceId: number,
  line: { action: string; target: string | null },
  details: Record<string, string | number | boolean | null>,
): Promise<void> {
  await sql`
    update audit_log set details = details || ${sql.json(details)}
    where id = (
      select id from audit_log
      where workspace_id = ${workspaceId} and action = ${line.action}
        and target is not distinct from ${line.target}
      order by id desc limit 1)`;
}

/** The workspace's entries, newest first, those older than `beforeId` when given. */
export async function listAuditEntries(
  sql: Sql,
  workspaceId: number,
  options: { limit: number; beforeId?: number },
): Promise<AuditRecord[]> {
  return sql<AuditRecord[]>`
    select id, workspace_id, user_id, actor, source, action, target, details,
           host(address) as address, user_agent, origin, at
    from audit_log
    where workspace_id = ${workspaceId}
      ${options.beforeId === undefined ? sql`` : sql`and id < ${options.beforeId}`}
    order by id desc
    limit ${options.limit}`;
}
