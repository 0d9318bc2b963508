import type { PendingQuery, Row } from 'postgres';
import type { TransactionSql } from './client.js';

/**
 * Receipts an SMPP provider sent before their message was settled (db/smpp.ts keeps them), taken
 * in the transaction that settles it and recorded with recordDelivery / recordOtpDelivery.
 *
 * A receipt and the settlement of its message can run at the same time in two workers. Both take
 * a transaction-scoped advisory lock on hash(workspace/provider slug/message id), for the
 * message id and each part id (in order, so two settlements cannot deadlock), before they read:
 * whichever comes second sees what the first wrote, so a receipt is never left behind.
 */

export interface SettledSmppMessage {
  workspaceId: number;
  providerSlug: string;
  /** The SMSC's id of the message (its first part's). */
  providerMessageId: string;
}

export interface PendingReceipt {
  status: 'delivered' | 'undelivered' | 'unknown';
  errorCode: string | null;
  at: Date;
}

/**
 * Locks the receipt keys of these messages, then takes (deletes and returns) the newest waiting
 * receipt of each, for any of its parts' ids; the array holds undefined where none waits.
 */
export async function takePendingSmppReceipts(
  tx: TransactionSql,
  messages: SettledSmppMessage[],
): Promise<(PendingReceipt | undefined)[]> {
  if (messages.length === 0) return [];
  // The messages numbered by their place (n = index + 1).
  const given = tx`
    select * from unnest(${messages.map((m) => m.workspaceId)}::bigint[],
                         ${messages.map((m) => m.providerSlug)}::text[],
                         ${messages.map((m) => m.providerMessageId)}::text[])
      with ordinality as m(workspace_id, provider_slug, message_id, n)`;
  const taken = await takeReceipts(tx, () => given);
  const byIndex = new Map(taken.map(({ n, ...receipt }) => [n - 1, receipt]));
  return messages.map((_, index) => byIndex.get(index));
}

/** A receipt taken for a campaign message just settled as sent through an SMPP provider. */
export interface PendingCampaignReceipt extends PendingReceipt {
  seq: number;
  providerSlug: string;
  providerMessageId: string;
}

/**
 * takePendingSmppReceipts for the messages `seqs` of a campaign, as their settlement (earlier in
 * the same transaction) left them: those sent through an SMPP provider. Its statements are sent
 * at once, behind whatever the transaction has in flight: one round trip.
 */
export async function takePendingCampaignReceipts(
  tx: TransactionSql,
  campaignId: number,
  seqs: number[],
): Promise<PendingCampaignReceipt[]> {
  const sent = () => tx`
    select c.workspace_id, m.provider_slug, m.provider_message_id as message_id, m.seq as n
    from campaign_messages m
    join campaigns c on c.id = m.campaign_id
    join providers p on p.workspace_id = c.workspace_id and p.slug = m.provider_slug
      and p.type = 'smpp'
    where m.campaign_id = ${campaignId} and m.seq = any(${seqs}::int[]) and m.status = 'sent'
      and m.provider_message_id is not null`;
  const taken = await takeReceipts(tx, sent);
  return taken.map(({ n, providerSlug, messageId, ...receipt }) => ({
    seq: n,
    providerSlug,
    providerMessageId: messageId,
    ...receipt,
  }));
}

/**
 * The two statements behind both: lock every receipt key of the messages `source` yields
 * (workspace_id, provider_slug, message_id, n), then take their newest waiting receipts. Sent
 * together; the second runs once the first holds every lock.
 */
async function takeReceipts(tx: TransactionSql, source: () => PendingQuery<Row[]>) {
  // The message's own id and its later parts' ids.
  const ids = () => tx`
    with m as (${source()})
    select n, workspace_id, provider_slug, message_id, message_id as id from m
    union all
    select m.n, m.workspace_id, m.provider_slug, m.message_id, pt.part_message_id from m
    join smpp_message_parts pt on pt.workspace_id = m.workspace_id
      and pt.provider_slug = m.provider_slug and pt.message_id = m.message_id`;
  const [, taken] = await Promise.all([
    tx`
      with ids as (${ids()})
      select pg_advisory_xact_lock(k) from (
        select distinct hashtextextended(workspace_id || '/' || provider_slug || '/' || id, 0) as k
        from ids order by k
      ) keys`.execute(),
    tx<(PendingReceipt & { n: number; providerSlug: string; messageId: string })[]>`
      with ids as (${ids()}), taken as (
        delete from smpp_pending_receipts r using ids
        where r.workspace_id = ids.workspace_id and r.provider_slug = ids.provider_slug
          and r.provider_message_id = ids.id
        returning ids.n, ids.provider_slug, ids.message_id, r.status, r.error_code, r.at
      )
      select distinct on (n) n::int, provider_slug, message_id, status, error_code, at
      from taken order by n, at desc`.execute(),
  ]);
  return taken;
}
