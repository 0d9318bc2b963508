/**
 * Messages whose delivery receipt never came (a provider's retries ran out while Herald's api or
 * Postgres was away; a provider that never sends one): found, asked about, given up as `unknown`.
 * The receipts they are given go through the receipts' own rules (recordDeliveries).
 */
import { NO_RECEIPT_ERROR_CODE } from './campaign-messages.js';
import type { Sql } from './client.js';

export interface AwaitingReceipt {
  campaignId: number;
  seq: number;
  workspaceId: number;
  providerSlug: string;
  providerMessageId: string | null;
  /** Submitted longer ago than the give-up window: unless the provider now says, it is unknown. */
  overdue: boolean;
}

export interface ReceiptWindows {
  /** A message is first asked about this long after its submission. */
  lookupAfterSeconds: number;
  /** And given up as `unknown` this long after it. */
  giveUpAfterSeconds: number;
}

/**
 * Up to `limit` sent messages still without a receipt that are due to be asked about: older than
 * the lookup window, and either never asked, or aged as long again since they last were (asked at
 * 10, 20, 40... minutes of age), or overdue. Only batches with messages awaiting a receipt are read
 * (report_batches_awaiting_idx), their messages through campaign_messages_status_idx.
 */
export async function findAwaitingReceipts(
  sql: Sql,
  windows: ReceiptWindows,
  limit: number,
): Promise<AwaitingReceipt[]> {
  const lookupAfter = windows.lookupAfterSeconds;
  const giveUpAfter = windows.giveUpAfterSeconds;
  return sql<AwaitingReceipt[]>`
    select m.campaign_id, m.seq, r.workspace_id, m.provider_slug, m.provider_message_id,
      m.submitted_at <= now() - make_interval(secs => ${giveUpAfter}) as overdue
    from report_batches r
    join campaign_messages m on m.campaign_id = r.campaign_id and m.status = 'sent'
    where r.sent > r.delivered + r.delivery_failed + r.delivery_unknown
      and m.delivery_status is null
      and m.submitted_at <= now() - make_interval(secs => ${lookupAfter})
      and (m.receipt_checked_at is null
           or now() - m.receipt_checked_at >= m.receipt_checked_at - m.submitted_at
           or m.submitted_at <= now() - make_interval(secs => ${giveUpAfter}))
    order by m.campaign_id, m.seq
    limit ${limit}`;
}

type MessageKey = Pick<AwaitingReceipt, 'campaignId' | 'seq'>;

/** Notes that these messages were asked about without a final answer, if still awaiting. */
export async function markReceiptsChecked(sql: Sql, messages: MessageKey[]): Promise<number> {
  if (messages.length === 0) return 0;
  const result = await sql`
    update campaign_messages m set receipt_checked_at = now()
    from unnest(${messages.map((key) => key.campaignId)}::bigint[],
                ${messages.map((key) => key.seq)}::int[]) as k(campaign_id, seq)
    where m.campaign_id = k.campaign_id and m.seq = k.seq and m.status = 'sent'
      and m.delivery_status is null`;
  return result.count;
}

/**
 * Gives these messages an `unknown` receipt (NO_RECEIPT_ERROR_CODE, dated now) — only those still
 * without one: a receipt that came meanwhile stands (a row another writer changed is checked anew
 * before it is updated). Returns how many were given up.
 */
export async function recordNoReceipt(sql: Sql, messages: MessageKey[]): Promise<number> {
  if (messages.length === 0) return 0;
  const result = await sql`
    update campaign_messages m set delivery_status = 'unknown',
      delivery_error_code = ${NO_RECEIPT_ERROR_CODE}, delivered_at = now(), receipt_checked_at = now()
    from unnest(${messages.map((key) => key.campaignId)}::bigint[],
                ${messages.map((key) => key.seq)}::int[]) as k(campaign_id, seq)
    where m.campaign_id = k.campaign_id and m.seq = k.seq and m.status = 'sent'
      and m.delivery_status is null`;
  return result.count;
}
