import { replyKeyword } from '../domain/opt-out.js';
import type { Sql } from './client.js';

export type OptOutSource = 'link' | 'reply' | 'operator';

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
