import type { Sql, TransactionSql } from './client.js';
import { type SettledSmppMessage, takePendingSmppReceipts } from './smpp-pending-receipts.js';

export interface CampaignForSubmission {
  id: number;
  workspaceId: number;
  body: string;
  senderId: string | null;
  routingType: 'direct' | 'failover';
  providerSlug: string | null;
  failoverRouteSlug: string | null;
  purpose: 'transactional' | 'marketing';
  /** Messages not submitted by then are failed; null for campaigns saved before validity periods. */
  validUntil: Date | null;
}

export interface PendingMessage {
  seq: number;
  recipient: string;
  attemptProvider: string | null;
  /** Milliseconds since that attempt was marked, by Postgres's clock; null without one. */
  attemptAgeMs: number | null;
  /** A marketing message whose recipient has opted out since the send. */
  optedOut: boolean;
}

export async function findCampaignForSubmission(sql: Sql, campaignId: number) {
  const [campaign] = await sql<CampaignForSubmission[]>`
    select id, workspace_id, body, sender_id, routing_type, provider_slug, failover_route_slug,
           purpose, valid_until
    from campaigns where id = ${campaignId}`;
  return campaign;
}

export async function countMessages(sql: Sql, campaignId: number): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from campaign_messages where campaign_id = ${campaignId}`;
  return row?.count ?? 0;
}

/** Unsettled messages of a chunk, in order. */
export async function findPendingMessages(
  sql: Sql,
  campaignId: number,
  fromSeq: number,
  toSeq: number,
) {
  return sql<PendingMessage[]>`
    select m.seq, m.recipient, m.attempt_provider,
      (extract(epoch from now() - m.attempt_started_at) * 1000)::float8 as attempt_age_ms,
      c.purpose = 'marketing' and exists (
        select 1 from opt_outs o where o.workspace_id = c.workspace_id and o.recipient = m.recipient
      ) as opted_out
    from campaign_messages m join campaigns c on c.id = m.campaign_id
    where m.campaign_id = ${campaignId} and m.seq between ${fromSeq} and ${toSeq}
      and m.status = 'queued'
    order by m.seq`;
}

/**
 * Written before submissions leave Herald, so an interruption leaves them marked as outcome
 * unknown; only while `lease` is held with at least `marginMs` of it left (activities/lease.ts).
 * Returns the messages marked: fewer than asked means the lease is gone.
 */
export async function markAttempts(
  sql: Sql,
  input: {
    campaignId: number;
    seqs: number[];
    provider: string;
    lease: { key: string; token: number; marginMs: number };
  },
): Promise<number> {
  const { lease } = input;
  const result = await sql`
    update campaign_messages set attempt_provider = ${input.provider}, attempt_started_at = now()
    where campaign_id = ${input.campaignId} and seq = any(${input.seqs}) and status = 'queued'
      and exists (
        select 1 from submission_leases
        where lease_key = ${lease.key} and token = ${lease.token}
          and expires_at > clock_timestamp() + make_interval(secs => ${lease.marginMs / 1000}))`;
  return result.count;
}

export interface SettledMessage {
  seq: number;
  status: 'sent' | 'failed';
  provider: string | null;
  providerMessageId: string | null;
  error: string | null;
}

/**
 * Settles messages once: a row already settled keeps its first outcome. Receipts an SMPP
 * provider sent before the batch settled are applied in the same transaction.
 */
export async function settleMessages(sql: Sql, campaignId: number, settled: SettledMessage[]) {
  if (settled.length === 0) return;
  await sql.begin(async (tx) => {
    await tx`
    update campaign_messages m set
      status = s.status, provider_slug = s.provider, provider_message_id = s.provider_message_id,
      error = s.error, submitted_at = case when s.status = 'sent' then now() end
    from unnest(${settled.map((row) => row.seq)}::int[], ${settled.map((row) => row.status)}::text[],
                ${settled.map((row) => row.provider)}::text[],
                ${settled.map((row) => row.providerMessageId)}::text[],
                ${settled.map((row) => row.error)}::text[])
      as s(seq, status, provider, provider_message_id, error)
    where m.campaign_id = ${campaignId} and m.seq = s.seq and m.status = 'queued'`;
    await recordPendingReceipts(
      tx,
      campaignId,
      settled.map((row) => row.seq),
    );
  });
}

/** Receipts an SMPP provider sent before these messages settled, recorded now. */
async function recordPendingReceipts(tx: TransactionSql, campaignId: number, seqs: number[]) {
  const messages = await tx<(SettledSmppMessage & { seq: number })[]>`
    select m.seq, c.workspace_id, m.provider_slug, m.provider_message_id
    from campaign_messages m
    join campaigns c on c.id = m.campaign_id
    join providers p on p.workspace_id = c.workspace_id and p.slug = m.provider_slug
      and p.type = 'smpp'
    where m.campaign_id = ${campaignId} and m.seq = any(${seqs}::int[]) and m.status = 'sent'
      and m.provider_message_id is not null`;
  const receipts = await takePendingSmppReceipts(tx, messages);
  for (const [index, receipt] of receipts.entries()) {
    const { seq, providerSlug, providerMessageId } = messages[index] as (typeof messages)[number];
    if (receipt)
      await recordDelivery(tx, {
        campaignId,
        seq,
        provider: providerSlug,
        providerMessageId,
        ...receipt,
      });
  }
}

/** Completes the campaign when no message is left queued; returns whether it is complete. */
export async function completeCampaign(sql: Sql, campaignId: number): Promise<boolean> {
  const [row] = await sql<{ completed: boolean }[]>`
    with done as (
      update campaigns set status = 'completed', completed_at = coalesce(completed_at, now())
      where id = ${campaignId}
        and not exists (select 1 from campaign_messages where campaign_id = ${campaignId} and status = 'queued')
      returning id
    )
    select exists (select 1 from done) as completed`;
  return row?.completed ?? false;
}

/**
 * Delivery receipt: kept only for the message the provider id belongs to; the latest receipt wins.
 * A receipt can overtake the provider's answer to the submission: the message is then still
 * queued with its attempt on that provider, and settles later with the same provider id.
 */
export async function recordDelivery(
  sql: Sql | TransactionSql,
  input: {
    campaignId: number;
    seq: number;
    provider: string;
    providerMessageId: string;
    status: 'delivered' | 'undelivered' | 'unknown';
    errorCode: string | null;
    at: Date;
  },
): Promise<boolean> {
  const result = await sql`
    update campaign_messages set delivery_status = ${input.status},
      delivery_error_code = ${input.errorCode}, delivered_at = ${input.at}
    where campaign_id = ${input.campaignId} and seq = ${input.seq}
      and (provider_message_id = ${input.providerMessageId}
           or (provider_message_id is null and status = 'queued'
               and attempt_provider = ${input.provider}))
      and (delivered_at is null or delivered_at <= ${input.at})`;
  return result.count > 0;
}
