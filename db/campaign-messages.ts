import type { Sql, TransactionSql } from './client.js';
import { takePendingCampaignReceipts } from './smpp-pending-receipts.js';
import { WRITE_MARK_HORIZON } from './submission-writes.js';

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
  /** A failover campaign's providers, in order, while its route is enabled; else null. */
  routeProviders: string[] | null;
}

export interface PendingMessage {
  seq: number;
  recipient: string;
  /** The provider an earlier attempt may have given it to; null if none may have. */
  attemptProvider: string | null;
  /** Milliseconds since that attempt was marked, by Postgres's clock; null without one. */
  attemptAgeMs: number | null;
  /** An earlier attempt claimed it, and provably wrote nothing of it (db/submission-writes.ts). */
  attemptUnwritten: boolean;
  /** A marketing message whose recipient has opted out since the send. */
  optedOut: boolean;
  /** Its number was erased since the send (`herald recipient erase`): only a masked form is left. */
  erased: boolean;
  /** Its own text in a personalised campaign (0035); null: the campaign's body. */
  body: string | null;
}

/** A campaign as its submissions need it, with its failover route's providers (same round trip). */
export async function findCampaignForSubmission(sql: Sql | TransactionSql, campaignId: number) {
  const [campaign] = await sql<CampaignForSubmission[]>`
    select c.id, c.workspace_id, c.body, c.sender_id, c.routing_type, c.provider_slug,
           c.failover_route_slug, c.purpose, c.valid_until, r.provider_slugs as route_providers
    from campaigns c
    left join failover_routes r on c.routing_type = 'failover' and r.enabled
      and r.workspace_id = c.workspace_id and r.slug = c.failover_route_slug
    where c.id = ${campaignId}`;
  return campaign;
}

export async function countMessages(sql: Sql, campaignId: number): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from campaign_messages where campaign_id = ${campaignId}`;
  return row?.count ?? 0;
}

/** Unsettled messages of a chunk, in order. */
export async function findPendingMessages(
  sql: Sql | TransactionSql,
  campaignId: number,
  fromSeq: number,
  toSeq: number,
) {
  return sql<PendingMessage[]>`
    select m.seq, m.recipient,
      case when unwritten then null else m.attempt_provider end as attempt_provider,
      case when unwritten then null
        else (extract(epoch from now() - m.attempt_started_at) * 1000)::float8 end as attempt_age_ms,
      unwritten as attempt_unwritten,
      c.purpose = 'marketing' and exists (
        select 1 from opt_outs o where o.workspace_id = c.workspace_id and o.recipient = m.recipient
      ) as opted_out,
      m.recipient not like '+%' as erased, m.body
    from campaign_messages m join campaigns c on c.id = m.campaign_id,
      lateral (select coalesce(m.attempt_batch is not null
        and m.attempt_epoch = pg_postmaster_start_time()
        and m.attempt_started_at > now() - ${WRITE_MARK_HORIZON}::interval
        and not exists (select 1 from submission_writes w where w.batch = m.attempt_batch), false)
        as unwritten) claim
    where m.campaign_id = ${campaignId} and m.seq between ${fromSeq} and ${toSeq}
      and m.status = 'queued'
    order by m.seq`;
}

/**
 * Claims messages for a submission: written before they leave Herald, so an interruption leaves
 * them marked as outcome unknown; only while `lease` is held with at least `marginMs` of it left
 * (activities/lease.ts). A message of a canceled campaign is not claimed (its cancel made the
 * unclaimed ones `canceled`, and an earlier attempt's message is not given a new one). Returns
 * whether the lease held and the messages claimed.
 */
export async function markAttempts(
  sql: Sql,
  input: {
    campaignId: number;
    seqs: number[];
    provider: string;
    lease: { key: string; token: number; marginMs: number };
    /** The write batch whose mark will say whether they were written (db/submission-writes.ts). */
    batch?: string;
  },
): Promise<{ leaseHeld: boolean; claimed: number[] }> {
  const { lease } = input;
  const [row] = await sql<{ leaseHeld: boolean; claimed: number[] }[]>`
    with lease as (
      select exists (
        select 1 from submission_leases
        where lease_key = ${lease.key} and token = ${lease.token}
          and expires_at > clock_timestamp() + make_interval(secs => ${lease.marginMs / 1000})
      ) as held
    ),
    claimed as (
      update campaign_messages set attempt_provider = ${input.provider}, attempt_started_at = now(),
        attempt_batch = ${input.batch ?? null}::uuid,
        attempt_epoch = case when ${input.batch ?? null}::uuid is not null
          then pg_postmaster_start_time() end
      where campaign_id = ${input.campaignId} and seq = any(${input.seqs}) and status = 'queued'
        and (select held from lease)
        and not exists (
          select 1 from campaigns where id = ${input.campaignId} and status = 'canceled')
      returning seq
    )
    select (select held from lease) as lease_held,
      coalesce((select array_agg(seq order by seq) from claimed), '{}')::int[] as claimed`;
  return row as { leaseHeld: boolean; claimed: number[] };
}

export interface SettledMessage {
  seq: number;
  /** `canceled`: its campaign was canceled before it could be given to a provider again. */
  status: 'sent' | 'failed' | 'canceled';
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
  const seqs = settled.map((row) => row.seq);
  await sql.begin(async (tx) => {
    // The settlement and the taking of receipts that overtook it are sent together: one round
    // trip between the report triggers' row locks and the commit.
    const updated = tx`
      update campaign_messages m set
        status = s.status, provider_slug = s.provider, provider_message_id = s.provider_message_id,
        error = s.error, submitted_at = case when s.status = 'sent' then now() end
      from unnest(${seqs}::int[], ${settled.map((row) => row.status)}::text[],
                  ${settled.map((row) => row.provider)}::text[],
                  ${settled.map((row) => row.providerMessageId)}::text[],
                  ${settled.map((row) => row.error)}::text[])
        as s(seq, status, provider, provider_message_id, error)
      where m.campaign_id = ${campaignId} and m.seq = s.seq and m.status = 'queued'`.execute();
    const [, receipts] = await Promise.all([
      updated,
      takePendingCampaignReceipts(tx, campaignId, seqs),
    ]);
    // Receipts an SMPP provider sent before these messages settled, recorded now.
    await recordDeliveries(
      tx,
      receipts.map(({ seq, providerSlug, providerMessageId, ...receipt }) => ({
        campaignId,
        seq,
        provider: providerSlug,
        providerMessageId,
        ...receipt,
      })),
    );
  });
}

/**
 * Completes the campaign when no message is left queued; returns whether it is done (completed,
 * or canceled with nothing left in flight: a canceled campaign stays canceled).
 */
export async function completeCampaign(sql: Sql, campaignId: number): Promise<boolean> {
  const [row] = await sql<{ done: boolean }[]>`
    with settled as (
      select not exists (
        select 1 from campaign_messages where campaign_id = ${campaignId} and status = 'queued'
      ) as yes
    ),
    completed as (
      update campaigns set status = 'completed', completed_at = coalesce(completed_at, now())
      where id = ${campaignId} and status <> 'canceled' and (select yes from settled)
      returning id
    )
    select exists (select 1 from completed)
      or ((select yes from settled)
          and exists (select 1 from campaigns where id = ${campaignId} and status = 'canceled'))
      as done`;
  return row?.done ?? false;
}

export interface DeliveryUpdate {
  campaignId: number;
  seq: number;
  provider: string;
  providerMessageId: string;
  status: 'delivered' | 'undelivered' | 'unknown';
  errorCode: string | null;
  at: Date;
}

/**
 * The error code of the `unknown` receipt Herald gives a message whose receipt never came
 * (db/receipt-reconciliation.ts): Herald's own verdict, which any receipt from the provider
 * replaces, whatever its time.
 */
export const NO_RECEIPT_ERROR_CODE = 'herald:no_receipt';

/** A receipt's fate: whether the message now holds it, and seconds from its submission to it. */
export interface RecordedReceipt {
  kept: boolean;
  /** Null when not kept, or when the receipt overtook the submission's own answer. */
  delaySeconds: number | null;
}

/**
 * Delivery receipts, in one statement: each is kept only for the message its provider id belongs
 * to, and the latest receipt wins (over Herald's own `unknown` for a receipt that never came, any
 * receipt wins). A receipt can overtake the provider's answer to the submission:
 * the message is then still queued with its attempt on that provider, and settles later with the
 * same provider id. Several receipts of one message end as if written one by one in this order:
 * the latest that applies wins, the later of two with the same time. Returns, per receipt,
 * whether it is the one the message now holds, and its delay.
 */
export async function recordDeliveries(
  sql: Sql | TransactionSql,
  updates: DeliveryUpdate[],
): Promise<RecordedReceipt[]> {
  if (updates.length === 0) return [];
  const kept = await sql<{ ordinal: number; delaySeconds: number | null }[]>`
    with latest as (
      select distinct on (d.campaign_id, d.seq) d.*
      from unnest(${updates.map((u) => u.campaignId)}::bigint[], ${updates.map((u) => u.seq)}::int[],
                  ${updates.map((u) => u.provider)}::text[],
                  ${updates.map((u) => u.providerMessageId)}::text[],
                  ${updates.map((u) => u.status)}::text[], ${updates.map((u) => u.errorCode)}::text[],
                  ${updates.map((u) => u.at.toISOString())}::timestamptz[])
        with ordinality as d(campaign_id, seq, provider, provider_message_id, status, error_code, at, ordinal)
      join campaign_messages m on m.campaign_id = d.campaign_id and m.seq = d.seq
      where (m.provider_message_id = d.provider_message_id
             or (m.provider_message_id is null and m.status = 'queued'
                 and m.attempt_provider = d.provider))
        and (m.delivered_at is null or m.delivered_at <= d.at
             or m.delivery_error_code = ${NO_RECEIPT_ERROR_CODE})
      -- Key order is also the order a chunk's settle meets its rows in, so the two rarely deadlock
      -- (when they do, Postgres ends one, and coalescedWrites writes its receipts again one by one).
      order by d.campaign_id, d.seq, d.at desc, d.ordinal desc
    )
    update campaign_messages m set delivery_status = d.status,
      delivery_error_code = d.error_code, delivered_at = d.at
    from latest d
    where m.campaign_id = d.campaign_id and m.seq = d.seq
      -- Again here: a row another writer changed meanwhile is checked anew before it is updated.
      and (m.delivered_at is null or m.delivered_at <= d.at
           or m.delivery_error_code = ${NO_RECEIPT_ERROR_CODE})
    returning d.ordinal::int, extract(epoch from d.at - m.submitted_at)::float8 as delay_seconds`;
  const delays = new Map(kept.map((row) => [row.ordinal, row.delaySeconds]));
  return updates.map((_update, index) => {
    const delaySeconds = delays.get(index + 1);
    return { kept: delaySeconds !== undefined, delaySeconds: delaySeconds ?? null };
  });
}

/** One delivery receipt (recordDeliveries), for a caller inside a transaction. */
export async function recordDelivery(
  sql: Sql | TransactionSql,
  update: DeliveryUpdate,
): Promise<RecordedReceipt> {
  const [recorded] = await recordDeliveries(sql, [update]);
  return recorded ?? { kept: false, delaySeconds: null };
}
