import { replyKeyword } from '../domain/opt-out.js';
import type { Sql, TransactionSql } from './client.js';

export const OPT_OUT_SOURCES = ['link', 'reply', 'operator'] as const;
export type OptOutSource = (typeof OPT_OUT_SOURCES)[number];

export async function optOut(
  sql: Sql,
  workspaceId: number,
  recipient: string,
  source: OptOutSource,
): Promise<void> {
  await sql`
    insert into opt_outs (workspace_id, recipient, source) values (${workspaceId}, ${recipient}, ${source})
    on conflict (workspace_id, recipient) do nothing`;
}

/** Opts the number back in: its own opt-out and, once it was erased, its keyed-hash forms. */
export async function optIn(
  sql: Sql,
  workspaceId: number,
  recipient: string,
  erasedForms: readonly string[] = [],
): Promise<void> {
  await sql`
    delete from opt_outs
    where workspace_id = ${workspaceId} and recipient = any(${[recipient, ...erasedForms]})`;
}

export async function isOptedOut(sql: Sql, workspaceId: number, recipient: string) {
  const [row] = await sql`
    select 1 from opt_outs where workspace_id = ${workspaceId} and recipient = ${recipient}`;
  return row !== undefined;
}

/**
 * A reply from a recipient: STOP (and its synonyms) opts them out of the workspace's marketing
 * messages, START opts them back in, anything else is ignored. Returns what it did.
 */
export async function applyInboundReply(
  sql: Sql,
  input: {
    workspaceId: number;
    from: string;
    body: string;
    /** The number's keyed-hash forms (security/recipient-hash.ts): START lifts an erased opt-out too. */
    erasedForms: (number: string) => readonly string[];
  },
): Promise<'opted_out' | 'opted_in' | 'ignored'> {
  const keyword = replyKeyword(input.body);
  if (keyword === 'stop') {
    await optOut(sql, input.workspaceId, input.from, 'reply');
    return 'opted_out';
  }
  if (keyword === 'start') {
    await optIn(sql, input.workspaceId, input.from, input.erasedForms(input.from));
    return 'opted_in';
  }
  return 'ignored';
}

/** Links for these recipients, made once per workspace and recipient and then reused. */
export async function ensureOptOutLinks(
  sql: Sql,
  workspaceId: number,
  links: { token: string; recipient: string }[],
): Promise<Map<string, string>> {
  if (links.length === 0) return new Map();
  await sql`
    insert into opt_out_links (token, workspace_id, recipient)
    select token, ${workspaceId}, recipient
    from unnest(${links.map((link) => link.token)}::text[], ${links.map((link) => link.recipient)}::text[])
      as l(token, recipient)
    on conflict do nothing`;
  const rows = await sql<{ token: string; recipient: string }[]>`
    select token, recipient from opt_out_links
    where workspace_id = ${workspaceId} and recipient = any(${links.map((link) => link.recipient)})`;
  return new Map(rows.map((row) => [row.recipient, row.token]));
}

export async function findOptOutLink(sql: Sql, token: string) {
  const [row] = await sql<{ workspaceId: number; recipient: string; workspaceName: string }[]>`
    select l.workspace_id, l.recipient, w.name as workspace_name
    from opt_out_links l join workspaces w on w.id = l.workspace_id
    where l.token = ${token}`;
  return row;
}

export interface OptOutRow {
  id: number;
  /** E.164, or the `erased:` keyed hash of an erased number (security/recipient-hash.ts). */
  recipient: string;
  source: OptOutSource;
  createdAt: Date;
}

export interface OptOutFilter {
  /** Exact stored recipients to match (a full number and its erased forms). */
  exact?: readonly string[];
  /** Digits a plain number contains (searching by part of a number). */
  digits?: string;
  source?: OptOutSource;
}

/** One page of the workspace's opt-outs, newest first; `before` continues from a row's id. */
export function listOptOuts(
  sql: Sql,
  workspaceId: number,
  filter: OptOutFilter,
  page: { limit: number; beforeId?: number },
) {
  return sql<OptOutRow[]>`
    select id, recipient, source, created_at from opt_outs
    where workspace_id = ${workspaceId}
      ${filter.exact ? sql`and recipient = any(${[...filter.exact]})` : sql``}
      ${filter.digits ? sql`and recipient like '+%' and strpos(recipient, ${filter.digits}) > 0` : sql``}
      ${filter.source ? sql`and source = ${filter.source}` : sql``}
      ${page.beforeId !== undefined ? sql`and id < ${page.beforeId}` : sql``}
    order by id desc
    limit ${page.limit}`;
}

/** Deletes one opt-out of the workspace by its row id, returning it; undefined when none. */
export async function deleteOptOut(
  tx: TransactionSql,
  workspaceId: number,
  id: number,
): Promise<OptOutRow | undefined> {
  const [row] = await tx<OptOutRow[]>`
    delete from opt_outs where workspace_id = ${workspaceId} and id = ${id}
    returning id, recipient, source, created_at`;
  return row;
}
