/** The audit log: who did what, when and from where, for every state-changing admin action. */
import {
  type AuditEntry,
  type AuditRecord,
  insertAuditEntry,
  listAuditEntries,
} from '../db/audit-log.js';
import type { Sql, TransactionSql } from '../db/client.js';
import type { Actor } from './actor.js';
import type { CommandDeps } from './deps.js';

type Deps = Pick<CommandDeps, 'sql'>;

export type { AuditEntry, AuditRecord };

const PAGE_SIZE = 50;

export async function recordAudit(deps: Deps, entry: AuditEntry): Promise<void> {
  await insertAuditEntry(deps.sql, {
    ...entry,
    userAgent: entry.userAgent?.slice(0, 500) ?? null,
    origin: entry.origin?.slice(0, 300) ?? null,
  });
}

/** What a change records of itself: its action, the record it acted on, and its facts. */
export interface AuditLine {
  action: string;
  target: string | null;
  details: Record<string, string | number | boolean | null>;
}

/**
 * The change's audit line, written with `tx`: the transaction that makes the change, so a
 * crash leaves both or neither. Never a password, a credential, a message body or a number.
 */
export async function writeAudit(
  tx: Sql | TransactionSql,
  actor: Actor,
  workspaceId: number | null,
  line: AuditLine,
): Promise<void> {
  await insertAuditEntry(tx, { workspaceId, ...line, ...auditedBy(actor) });
}

function auditedBy(actor: Actor) {
  switch (actor.kind) {
    case 'member':
      return {
        userId: actor.userId,
        actor: actor.email,
        source: 'console' as const,
        address: actor.address,
        userAgent: actor.userAgent?.slice(0, 500) ?? null,
        origin: null,
      };
    case 'operator':
      return {
        userId: null,
        actor: actor.user,
        source: 'cli' as const,
        address: null,
        userAgent: null,
        origin: `cli@${actor.host}`.slice(0, 300),
      };
    case 'api_key':
      return {
        userId: null,
        actor: `API key ${actor.prefix}`,
        source: 'api' as const,
        address: actor.address,
        userAgent: null,
        origin: null,
      };
  }
}

/** One page of the workspace's log, newest first; `before` continues from an entry's id. */
export async function listAudit(
  deps: Deps,
  input: { workspaceId: number; before?: number },
): Promise<{ entries: AuditRecord[]; nextBefore: number | null }> {
  const entries = await listAuditEntries(deps.sql, input.workspaceId, {
    limit: PAGE_SIZE + 1,
    ...(input.before !== undefined &&
      Number.isSafeInteger(input.before) && { beforeId: input.before }),
  });
  const page = entries.slice(0, PAGE_SIZE);
  return {
    entries: page,
    nextBefore: entries.length > PAGE_SIZE ? (page.at(-1)?.id ?? null) : null,
  };
}
