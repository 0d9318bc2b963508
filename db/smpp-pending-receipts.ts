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
  // The message's own id and its later parts' ids, numbered by message (n = index + 1).
  const ids = () => tx`
    with m as (
      select * from unnest(${messages.map((m) => m.workspaceId)}::bigint[],
                           ${messages.map((m) => m.providerSlug)}::text[],
                           ${messages.map((m) => m.providerMessageId)}::text[])
        with ordinality as m(workspace_id, provider_slug, message_id, n)
    )
    select n, workspace_id, provider_slug, message_id as id from m
    union all
    select m.n, m.workspace_id, m.provider_slug, pt.part_message_id from m
    join smpp_message_parts pt on pt.workspace_id = m.workspace_id
      and pt.provider_slug = m.provider_slug and pt.message_id = m.message_id`;
  await tx`
    with ids as (${ids()})
    select pg_advisory_xact_lock(k) from (
      select distinct hashtextextended(workspace_id || '/' || provider_slug || '/' || id, 0) as k
      from ids order by k
    ) keys`;
  const taken = await tx<(PendingReceipt & { n: number })[]>`
    with ids as (${ids()}), taken as (
      delete from smpp_pending_receipts r using ids
      where r.workspace_id = ids.workspace_id and r.provider_slug = ids.provider_slug
        and r.provider_message_id = ids.id
      returning ids.n, r.status, r.error_code, r.at
    )
    select distinct on (n) n::int, status, error_code, at from taken order by n, at desc`;
  const byIndex = new Map(taken.map(({ n, ...receipt }) => [n - 1, receipt]));
  return messages.map((_, index) => byIndex.get(index));
}
