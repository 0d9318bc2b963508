/**
 * Recipients' replies other than STOP/START (0036_inbound_messages.sql): stored once per provider
 * message, listed in the console's Inbox, answered with the workspace's help text when they say HELP.
 */
import { replyKeyword } from '../domain/opt-out.js';
import type { Sql, TransactionSql } from './client.js';
import { applyInboundReply } from './opt-outs.js';

/** A reply without a provider id repeated within this is the same delivery again (SMPP). */
const SAME_DELIVERY_WINDOW_MINUTES = 10;

export interface InboundInput {
  workspaceId: number;
  providerSlug: string;
  /** Null when the provider gives none: then an identical reply within minutes is the same one. */
  providerMessageId: string | null;
  from: string;
  to: string;
  text: string;
  /** The campaign it answers when the delivery names it; null: none; undefined: look it up. */
  campaignId?: number | null;
  /** A HELP reply: answered with the workspace's help text, when it has one. */
  asksForHelp: boolean;
}

export interface StoredInbound {
  id: number;
  /** Delivered before: stored then, not again. */
  duplicate: boolean;
  /** An automatic answer is due and its run was never confirmed started. */
  replyToDispatch: boolean;
}

interface Row {
  id: number;
  replyStatus: string | null;
  replyDispatchedAt: Date | null;
}

const stored = (row: Row, duplicate: boolean): StoredInbound => ({
  id: row.id,
  duplicate,
  replyToDispatch: row.replyStatus !== null && row.replyDispatchedAt === null,
});

/** Stores a reply once: a second delivery of it (same provider id) finds the first. */
export async function storeInboundMessage(sql: Sql, input: InboundInput): Promise<StoredInbound> {
  const { workspaceId, providerSlug, providerMessageId, from, to, text } = input;
  return sql.begin(async (tx) => {
    if (providerMessageId === null) {
      // No id to be unique on: one delivery at a time per identical reply, the window decides.
      await tx`select pg_advisory_xact_lock(hashtextextended(${`${workspaceId}/${providerSlug}/${from}/${to}/${text}`}, 36))`;
      const [same] = await tx<Row[]>`
        select id::int, reply_status, reply_dispatched_at from inbound_messages
        where from_number = ${from} and workspace_id = ${workspaceId}
          and provider_slug = ${providerSlug} and provider_message_id is null
          and to_number = ${to} and text = ${text}
          and received_at > now() - make_interval(mins => ${SAME_DELIVERY_WINDOW_MINUTES})
        order by id desc limit 1`;
      if (same) return stored(same, true);
    }
    const campaign =
      input.campaignId !== undefined
        ? tx`${input.campaignId}::bigint`
        : tx`(select m.campaign_id from campaign_messages m join campaigns c on c.id = m.campaign_id
             where m.recipient = ${from} and c.workspace_id = ${workspaceId}
               and m.provider_slug = ${providerSlug} and m.status = 'sent'
               and (c.sender_id is null or c.sender_id = ${to})
             order by m.campaign_id desc limit 1)`;
    const [inserted] = await tx<Row[]>`
      insert into inbound_messages (workspace_id, provider_slug, provider_message_id, from_number,
        to_number, text, campaign_id, reply_status, reply_body)
      select w.id, ${providerSlug}, ${providerMessageId}, ${from}, ${to}, ${text}, ${campaign},
        case when ${input.asksForHelp}::boolean and w.help_text is not null then 'pending' end,
        case when ${input.asksForHelp}::boolean then w.help_text end
      from workspaces w where w.id = ${workspaceId}
      on conflict (workspace_id, provider_slug, provider_message_id)
        where provider_message_id is not null do nothing
      returning id::int, reply_status, reply_dispatched_at`;
    if (inserted) return stored(inserted, false);
    const [first] = await tx<Row[]>`
      select id::int, reply_status, reply_dispatched_at from inbound_messages
      where workspace_id = ${workspaceId} and provider_slug = ${providerSlug}
        and provider_message_id = ${providerMessageId}`;
    if (!first) throw new Error(`workspace ${workspaceId} does not exist`);
    return stored(first, true);
  });
}

/** The answer's run is confirmed started: later deliveries of the reply leave it be. */
export async function markReplyDispatched(sql: Sql, id: number): Promise<void> {
  await sql`
    update inbound_messages set reply_dispatched_at = coalesce(reply_dispatched_at, now())
    where id = ${id}`;
}

export interface HelpReply {
  id: number;
  workspaceId: number;
  providerSlug: string;
  /** Whom the answer goes to: the reply's sender. */
  to: string;
  /** What it goes out from: the sender the reply was sent to. */
  from: string;
  body: string;
  status: 'pending' | 'submitting' | 'sent' | 'failed';
  attemptAt: Date | null;
}

const HELP_REPLY_COLUMNS = (sql: Sql) => sql`
  id::int, workspace_id::int, provider_slug, from_number as "to", to_number as "from",
  reply_body as body, reply_status as status, reply_attempt_at as attempt_at`;

/** Takes the answer for submission, once: undefined when it was taken before (or is not due). */
export async function claimHelpReply(sql: Sql, id: number): Promise<HelpReply | undefined> {
  const [reply] = await sql<HelpReply[]>`
    update inbound_messages set reply_status = 'submitting', reply_attempt_at = now()
    where id = ${id} and reply_status = 'pending'
    returning ${HELP_REPLY_COLUMNS(sql)}`;
  return reply;
}

export async function findHelpReply(sql: Sql, id: number): Promise<HelpReply | undefined> {
  const [reply] = await sql<HelpReply[]>`
    select ${HELP_REPLY_COLUMNS(sql)} from inbound_messages
    where id = ${id} and reply_status is not null`;
  return reply;
}

export async function settleHelpReply(
  sql: Sql,
  id: number,
  outcome: { status: 'sent'; providerMessageId: string } | { status: 'failed'; error: string },
): Promise<void> {
  await sql`
    update inbound_messages set reply_status = ${outcome.status},
      reply_provider_message_id = ${outcome.status === 'sent' ? outcome.providerMessageId : null},
      reply_error = ${outcome.status === 'failed' ? outcome.error : null}
    where id = ${id} and reply_status = 'submitting'`;
}

export interface InboundListItem {
  id: number;
  providerSlug: string;
  from: string;
  to: string;
  text: string;
  receivedAt: Date;
  campaignId: number | null;
  replyStatus: HelpReply['status'] | null;
}

/** Up to `limit` replies of the workspace, newest first, older than `beforeId` when given. */
export function listInboundMessages(
  sql: Sql,
  workspaceId: number,
  beforeId: number | null,
  limit: number,
) {
  return sql<InboundListItem[]>`
    select id::int, provider_slug, from_number as "from", to_number as "to", text, received_at,
      campaign_id::int, reply_status
    from inbound_messages
    where workspace_id = ${workspaceId} ${beforeId === null ? sql`` : sql`and id < ${beforeId}`}
    order by id desc limit ${limit}`;
}

/** The workspace's HELP answer; null: none. Undefined when there is no such workspace. */
export async function setWorkspaceHelpText(
  sql: Sql | TransactionSql,
  slug: string,
  helpText: string | null,
): Promise<{ id: number; slug: string; helpText: string | null } | undefined> {
  const [row] = await sql<{ id: number; slug: string; helpText: string | null }[]>`
    update workspaces set help_text = ${helpText} where slug = ${slug}
    returning id::int, slug, help_text`;
  return row;
}

export async function findWorkspaceHelpText(
  sql: Sql | TransactionSql,
  workspaceId: number,
): Promise<string | null> {
  const [row] = await sql<{ helpText: string | null }[]>`
    select help_text from workspaces where id = ${workspaceId}`;
  return row?.helpText ?? null;
}

/** What a provider delivered: a reply to one of the workspace's senders. */
export interface InboundDelivery {
  workspaceId: number;
  providerSlug: string;
  providerMessageId: string | null;
  from: string;
  to: string;
  body: string;
  /** As InboundInput.campaignId: undefined looks the campaign up. */
  campaignId?: number | null;
}

export type ReplyOutcome = 'opted_out' | 'opted_in' | 'stored' | 'duplicate';

/**
 * A reply as every provider path takes it (Twilio's and the simulator's webhooks, SMPP binds):
 * STOP and START change the opt-out; anything else is stored once, and a HELP whose answer is due
 * has its run started (`startHelpReply`, idempotent by id) before this returns. A failure throws,
 * so the provider delivers again and that delivery starts what this one could not.
 */
export async function recordInboundDelivery(
  sql: Sql,
  delivery: InboundDelivery,
  options: {
    /** The number's keyed-hash forms (security/recipient-hash.ts): START lifts an erased opt-out. */
    erasedForms: (number: string) => readonly string[];
    /** Absent (a test's SMPP sessions): a due answer stays due for a delivery that has one. */
    startHelpReply?: (reply: { workspaceId: number; inboundId: number }) => Promise<void>;
  },
): Promise<ReplyOutcome> {
  const keyword = replyKeyword(delivery.body);
  if (keyword === 'stop' || keyword === 'start')
    return (await applyInboundReply(sql, { ...delivery, erasedForms: options.erasedForms })) ===
      'opted_out'
      ? 'opted_out'
      : 'opted_in';
  const inbound = await storeInboundMessage(sql, {
    ...delivery,
    text: delivery.body,
    asksForHelp: keyword === 'help',
  });
  if (inbound.replyToDispatch && options.startHelpReply) {
    await options.startHelpReply({ workspaceId: delivery.workspaceId, inboundId: inbound.id });
    await markReplyDispatched(sql, inbound.id);
  }
  return inbound.duplicate ? 'duplicate' : 'stored';
}
