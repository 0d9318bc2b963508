/** Reads for the console's dashboard and batch pages, from the reporting tables (migration 0004). */
import type { Sql } from './client.js';

export interface DailyDelivery {
  day: Date;
  sent: number;
  delivered: number;
  /** Failed to send, or undelivered by receipt. */
  failed: number;
  /** Sent that day and still without a receipt. */
  awaiting: number;
  /** `unknown` receipts. */
  unknown: number;
}

/**
 * Per UTC day from `from`, by their own timestamps: messages sent, delivered, failed, given an
 * unknown receipt, and (by the day they were sent) still awaiting one.
 */
export async function dailyDelivery(
  sql: Sql,
  workspaceId: number,
  from: Date,
): Promise<DailyDelivery[]> {
  return sql<DailyDelivery[]>`
    select date_trunc('day', minute, 'UTC') as day, sum(sent)::int as sent,
           sum(delivered)::int as delivered, sum(failed)::int as failed,
           sum(awaiting)::int as awaiting, sum(unknown)::int as unknown
    from report_delivery_minutes
    where workspace_id = ${workspaceId} and minute >= ${from}
    group by 1 order by 1`;
}

export async function workspaceCreditBalance(sql: Sql, workspaceId: number): Promise<number> {
  const [row] = await sql<{ creditBalance: number }[]>`
    select credit_balance from workspaces where id = ${workspaceId}`;
  return Number(row?.creditBalance ?? 0);
}

export interface FailureGroup {
  /** `send`: the provider refused or the send failed; `delivery`: an undelivered receipt. */
  stage: 'send' | 'delivery';
  /** The error with every number in it replaced by `#`: N numbers rejected alike are one group. */
  shape: string;
  /** One of the group's errors as stored (its number unmasked). */
  example: string;
  count: number;
}

/**
 * A batch's failures grouped by the shape of their error (`numberInText`: the number pattern
 * of domain/phone.ts), most frequent first.
 */
export async function failureGroups(
  sql: Sql,
  campaignId: number,
  numberInText: string,
): Promise<FailureGroup[]> {
  return sql<FailureGroup[]>`
    select stage, shape, example, count::int from (
      select 'send' as stage,
             regexp_replace(coalesce(error, 'unknown'), ${numberInText}, '#', 'g') as shape,
             min(coalesce(error, 'unknown')) as example, count(*) as count
      from campaign_messages where campaign_id = ${campaignId} and status = 'failed'
      group by 2
      union all
      select 'delivery', coalesce(delivery_error_code, 'unknown'),
             min(coalesce(delivery_error_code, 'unknown')), count(*)
      from campaign_messages
      where campaign_id = ${campaignId} and status = 'sent' and delivery_status = 'undelivered'
      group by 2
    ) groups
    order by count desc, stage, shape
    limit 200`;
}

/**
 * Of `campaignIds`, those still inside their validity window (campaigns.valid_until; 24 hours
 * from creation for a batch saved before validity periods, as db/orphan-campaigns.ts counts it).
 */
export async function batchesWithinValidity(sql: Sql, campaignIds: number[]): Promise<number[]> {
  if (campaignIds.length === 0) return [];
  const rows = await sql<{ id: number }[]>`
    select id from campaigns
    where id = any(${campaignIds}::bigint[])
      and coalesce(valid_until, created_at + interval '24 hours') > now()`;
  return rows.map((row) => Number(row.id));
}

export interface BatchRecipient {
  seq: number;
  recipient: string;
  status: 'queued' | 'sent' | 'failed' | 'canceled';
  deliveryStatus: 'delivered' | 'undelivered' | 'unknown' | null;
  /** Why it failed to send, or the code of an undelivered or unknown receipt. */
  error: string | null;
  providerSlug: string | null;
  submittedAt: Date | null;
  deliveredAt: Date | null;
}

/** Up to `limit` messages of a batch in recipient order, after `afterSeq` (keyset on the primary key). */
export async function listBatchRecipients(
  sql: Sql,
  campaignId: number,
  afterSeq: number,
  limit: number,
): Promise<BatchRecipient[]> {
  return sql<BatchRecipient[]>`
    select seq, recipient, status, delivery_status,
           case when status = 'failed' then coalesce(error, 'unknown')
                when delivery_status = 'undelivered' then coalesce(delivery_error_code, 'unknown')
                when delivery_status = 'unknown' then delivery_error_code
           end as error,
           provider_slug, submitted_at, delivered_at
    from campaign_messages
    where campaign_id = ${campaignId} and seq > ${afterSeq}
    order by seq
    limit ${limit}`;
}
