/** Reads for the console's dashboard and batch pages, from the reporting tables (migration 0004). */
import type { Sql } from './client.js';

export interface DailyDelivery {
  day: Date;
  sent: number;
  delivered: number;
  failed: number;
}

/** Per UTC day from `from`: messages sent, delivered and failed, by their own timestamps. */
export async function dailyDelivery(
  sql: Sql,
  workspaceId: number,
  from: Date,
): Promise<DailyDelivery[]> {
  return sql<DailyDelivery[]>`
    select date_trunc('day', minute, 'UTC') as day, sum(sent)::int as sent,
           sum(delivered)::int as delivered, sum(failed)::int as failed
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
  error: string;
  count: number;
}

/** A batch's failures grouped by their error, most frequent first. */
export async function failureGroups(sql: Sql, campaignId: number): Promise<FailureGroup[]> {
  return sql<FailureGroup[]>`
    select stage, error, count::int from (
      select 'send' as stage, coalesce(error, 'unknown') as error, count(*) as count
      from campaign_messages where campaign_id = ${campaignId} and status = 'failed'
      group by 2
      union all
      select 'delivery', coalesce(delivery_error_code, 'unknown'), count(*)
      from campaign_messages
      where campaign_id = ${campaignId} and status = 'sent' and delivery_status = 'undelivered'
      group by 2
    ) groups
    order by count desc, stage, error
    limit 50`;
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
