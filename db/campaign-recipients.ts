/**
 * A campaign's recipients as the recipient listing reads them: its messages (campaign_messages)
 * and the numbers its send left out (campaign_exclusions, 0034), in one seq order.
 */
import type { RecipientStatus } from '../domain/recipient-listing.js';
import type { Sql } from './client.js';

export interface CampaignRecipientRow {
  seq: number;
  /** As stored: a number, or the masked form retention and erasure leave. */
  recipient: string;
  status: RecipientStatus;
  /** Why it failed or was canceled or left out; an undelivered or unknown receipt's code. */
  errorCode: string | null;
  provider: string | null;
  sentAt: Date | null;
  receiptAt: Date | null;
}

/** Whether the campaign exists, in `workspaceId` when one is given (null: any workspace). */
export async function campaignExists(
  sql: Sql,
  campaignId: number,
  workspaceId: number | null,
): Promise<boolean> {
  const [row] = await sql<{ id: number }[]>`
    select id from campaigns
    where id = ${campaignId} ${workspaceId === null ? sql`` : sql`and workspace_id = ${workspaceId}`}`;
  return row !== undefined;
}

/**
 * Up to `limit` recipients after `afterSeq` in seq order (keyset on both primary keys), only
 * those with `status` when given. A message's status is its campaign_messages status, or for a
 * sent one its receipt's when that says delivered or undelivered.
 */
export async function listCampaignRecipients(
  sql: Sql,
  query: { campaignId: number; afterSeq: number; status: RecipientStatus | null; limit: number },
): Promise<CampaignRecipientRow[]> {
  const { campaignId, afterSeq, status, limit } = query;
  const messages = sql`
    select m.seq, m.recipient,
      case when m.status <> 'sent' then m.status
           when m.delivery_status in ('delivered', 'undelivered') then m.delivery_status
           else 'sent' end as status,
      case when m.status in ('failed', 'canceled') then m.error
           when m.status = 'sent' and m.delivery_status in ('undelivered', 'unknown')
             then m.delivery_error_code end as error_code,
      m.provider_slug as provider, m.submitted_at as sent_at,
      case when m.status = 'sent' then m.delivered_at end as receipt_at
    from campaign_messages m
    where m.campaign_id = ${campaignId} and m.seq > ${afterSeq}`;
  const exclusions = sql`
    select e.seq, e.recipient, 'excluded' as status, e.reason as error_code,
      null::text as provider, null::timestamptz as sent_at, null::timestamptz as receipt_at
    from campaign_exclusions e
    where e.campaign_id = ${campaignId} and e.seq > ${afterSeq}`;
  // A filter on `excluded` reads exclusions only, any other status messages only.
  const rows =
    status === 'excluded'
      ? exclusions
      : status === null
        ? sql`${messages} union all ${exclusions}`
        : messages;
  return sql<CampaignRecipientRow[]>`
    select * from (${rows}) r
    ${status === null || status === 'excluded' ? sql`` : sql`where r.status = ${status}`}
    order by r.seq
    limit ${limit}`;
}
