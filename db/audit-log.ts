import type { Sql } from './client.js';

export interface AuditEntry {
  workspaceId: number | null;
  userId: number | null;
  actor: string;
  source: 'console' | 'cli';
  action: string;
  target: string | null;
  details: Record<string, string | number | boolean | null>;
  address: string | null;
  userAgent: string | null;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  at: Date;
}

export async function insertAuditEntry(sql: Sql, entry: AuditEntry): Promise<void> {
  await sql`
    insert into audit_log (workspace_id, user_id, actor, source, action, target, details,
                           address, user_agent)
    values (${entry.workspaceId}, ${entry.userId}, ${entry.actor}, ${entry.source},
            ${entry.action}, ${entry.target}, ${sql.json(entry.details)}, ${entry.address},
            ${entry.userAgent})`;
}

/** The workspace's entries, newest first, those older than `beforeId` when given. */
export async function listAuditEntries(
  sql: Sql,
  workspaceId: number,
  options: { limit: number; beforeId?: number },
): Promise<AuditRecord[]> {
  return sql<AuditRecord[]>`
    select id, workspace_id, user_id, actor, source, action, target, details,
           host(address) as address, user_agent, at
    from audit_log
    where workspace_id = ${workspaceId}
      ${options.beforeId === undefined ? sql`` : sql`and id < ${options.beforeId}`}
    order by id desc
    limit ${options.limit}`;
}
