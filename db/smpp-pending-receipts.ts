import type { TransactionSql } from './client.js';

/**
 * Receipts an SMPP provider sent before their message was settled (db/smpp.ts keeps them), applied
 * in the transaction that settles it, with the latest-wins rule of recordDelivery.
 *
 * A receipt and the settlement of its message can run at the same time in two workers. Both take
 * a transaction-scoped advisory lock on hash(workspace/provider slug/message id), for the
 * message id and each part id (in order, so two settlements cannot deadlock), before they read:
 * whichever comes second sees what the first wrote, so a receipt is never left behind.
 */

export async function applyPendingCampaignReceipts(
  tx: TransactionSql,
  campaignId: number,
  seqs: number[],
): Promise<void> {
  const locked = await tx`
    select pg_advisory_xact_lock(k) from (
      select distinct hashtextextended(c.workspace_id || '/' || m.provider_slug || '/' || ids.id, 0) as k
      from campaign_messages m
      join campaigns c on c.id = m.campaign_id
      join providers p on p.workspace_id = c.workspace_id and p.slug = m.provider_slug
        and p.type = 'smpp'
      cross join lateral (
        select m.provider_message_id as id
        union all
        select pt.part_message_id from smpp_message_parts pt
        where pt.workspace_id = c.workspace_id and pt.provider_slug = m.provider_slug
          and pt.message_id = m.provider_message_id
      ) ids
      where m.campaign_id = ${campaignId} and m.seq = any(${seqs}::int[]) and m.status = 'sent'
        and m.provider_message_id is not null
      order by k
    ) keys`;
  if (locked.length === 0) return;
  await tx`
    with targets as (
      select m.seq, c.workspace_id, m.provider_slug, ids.id
      from campaign_messages m
      join campaigns c on c.id = m.campaign_id
      cross join lateral (
        select m.provider_message_id as id
        union all
        select pt.part_message_id from smpp_message_parts pt
        where pt.workspace_id = c.workspace_id and pt.provider_slug = m.provider_slug
          and pt.message_id = m.provider_message_id
      ) ids
      where m.campaign_id = ${campaignId} and m.seq = any(${seqs}::int[]) and m.status = 'sent'
        and m.provider_message_id is not null
    ), latest as (
      select distinct on (t.seq) t.seq, r.status, r.error_code, r.at
      from targets t
      join smpp_pending_receipts r on r.workspace_id = t.workspace_id
        and r.provider_slug = t.provider_slug and r.provider_message_id = t.id
      order by t.seq, r.at desc
    ), applied as (
      update campaign_messages m set delivery_status = l.status,
        delivery_error_code = l.error_code, delivered_at = l.at
      from latest l
      where m.campaign_id = ${campaignId} and m.seq = l.seq
        and (m.delivered_at is null or m.delivered_at <= l.at)
    )
    delete from smpp_pending_receipts r using targets t
    where r.workspace_id = t.workspace_id and r.provider_slug = t.provider_slug
      and r.provider_message_id = t.id`;
}

export async function applyPendingOtpReceipts(tx: TransactionSql, requestId: string) {
  const locked = await tx`
    select pg_advisory_xact_lock(k) from (
      select distinct hashtextextended(r.workspace_id || '/' || r.provider_slug || '/' || ids.id, 0) as k
      from otp_requests r
      join providers p on p.workspace_id = r.workspace_id and p.slug = r.provider_slug
        and p.type = 'smpp'
      cross join lateral (
        select r.provider_message_id as id
        union all
        select pt.part_message_id from smpp_message_parts pt
        where pt.workspace_id = r.workspace_id and pt.provider_slug = r.provider_slug
          and pt.message_id = r.provider_message_id
      ) ids
      where r.id = ${requestId} and r.status = 'accepted' and r.provider_message_id is not null
      order by k
    ) keys`;
  if (locked.length === 0) return;
  await tx`
    with targets as (
      select r.workspace_id, r.provider_slug, ids.id
      from otp_requests r
      cross join lateral (
        select r.provider_message_id as id
        union all
        select pt.part_message_id from smpp_message_parts pt
        where pt.workspace_id = r.workspace_id and pt.provider_slug = r.provider_slug
          and pt.message_id = r.provider_message_id
      ) ids
      where r.id = ${requestId} and r.status = 'accepted' and r.provider_message_id is not null
    ), latest as (
      select p.status, p.error_code, p.at
      from targets t
      join smpp_pending_receipts p on p.workspace_id = t.workspace_id
        and p.provider_slug = t.provider_slug and p.provider_message_id = t.id
      order by p.at desc
      limit 1
    ), applied as (
      update otp_requests r set delivery_status = l.status, delivery_error_code = l.error_code,
        delivered_at = l.at
      from latest l
      where r.id = ${requestId} and (r.delivered_at is null or r.delivered_at <= l.at)
    )
    delete from smpp_pending_receipts p using targets t
    where p.workspace_id = t.workspace_id and p.provider_slug = t.provider_slug
      and p.provider_message_id = t.id`;
}
