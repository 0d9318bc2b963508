/**
 * Reads for the MCP reporting tools. Batches and delivery history come only from the reporting
 * tables (kept current by the triggers of migration 0004), so no report scans message rows.
 */
import { batchName } from '../domain/batch-name.js';
import type { CampaignStatus } from '../domain/campaign-status.js';
import type { Sql } from './client.js';

export type BatchKind = 'campaign' | 'quick_send';

/** One batch (a row of report_batches): a campaign (named) or a Quick Send or API send (unnamed). */
export interface ReportBatch {
  id: number;
  kind: BatchKind;
  /** Quick Send only: `quick_send` (dashboard) or `api`; null when not recorded. */
  source: 'quick_send' | 'api' | null;
  /** Never null: domain/batch-name.ts names a batch that was given no name. */
  name: string;
  /** The send's own reference (from its campaign row). */
  reference: string | null;
  /** campaigns.status, copied by trigger. */
  status: CampaignStatus;
  purpose: 'transactional' | 'marketing';
  routingType: 'direct' | 'failover';
  providerSlug: string | null;
  providerName: string | null;
  failoverRouteSlug: string | null;
  failoverRouteName: string | null;
  createdAt: Date;
  completedAt: Date | null;
  recipients: number;
  sent: number;
  failedToSend: number;
  delivered: number;
  deliveryFailed: number;
  /** Sent messages whose receipt says `unknown` (an unmapped status, or none came in time). */
  deliveryUnknown: number;
  /** Recipients' replies that answer it (inbound_messages, 0036; STOP/START not counted). */
  replies: number;
  /** Messages its cancel left unsent (0038). */
  canceled: number;
}

/** A batch with its campaign's reference: `from report_batches r join campaigns c`. */
const batchColumns = (sql: Sql) => sql`
  r.campaign_id as id, r.kind, r.source, r.name, c.reference, r.status, r.purpose,
  r.routing_type, r.provider_slug, r.provider_name, r.failover_route_slug, r.failover_route_name,
  r.created_at, r.completed_at, r.recipients, r.sent, r.failed_to_send, r.delivered,
  r.delivery_failed, r.delivery_unknown, r.replies, r.canceled`;

type StoredBatch = Omit<ReportBatch, 'name'> & { name: string | null };

const named = (row: StoredBatch): ReportBatch => ({ ...row, name: batchName(row) });

/** The workspace's latest batches, of one kind or (undefined) of every kind, newest first. */
export async function listRecentBatches(
  sql: Sql,
  workspaceId: number,
  kind: BatchKind | undefined,
  limit: number,
): Promise<ReportBatch[]> {
  return listBatchPage(sql, workspaceId, { kind }, undefined, limit);
}

/** What the console's Campaigns page narrows the workspace's batches to; each part optional. */
export interface BatchFilter {
  kind?: BatchKind;
  status?: ReportBatch['status'];
  /** `campaign`: named campaigns; `quick_send` or `api`: Quick Send batches of that source. */
  source?: 'campaign' | 'quick_send' | 'api';
  /** Created at or after. */
  createdFrom?: Date;
  /** Created before (exclusive). */
  createdBefore?: Date;
}

/** Where a page starts: after the newest, or next to a batch id seen on the page before. */
export type BatchCursor = { olderThan: number } | { newerThan: number } | undefined;

/**
 * Up to `limit` batches of the workspace matching `filter`, newest (highest id) first, from the
 * cursor on. Keyset by id: the ids of report_batches_recent_idx (by kind) or the primary key.
 */
export async function listBatchPage(
  sql: Sql,
  workspaceId: number,
  filter: BatchFilter,
  cursor: BatchCursor,
  limit: number,
): Promise<ReportBatch[]> {
  const source =
    filter.source === undefined
      ? sql``
      : filter.source === 'campaign'
        ? sql`and r.kind = 'campaign'`
        : sql`and r.kind = 'quick_send' and r.source = ${filter.source}`;
  const newer = cursor !== undefined && 'newerThan' in cursor;
  const rows = await sql<StoredBatch[]>`
    select ${batchColumns(sql)} from report_batches r join campaigns c on c.id = r.campaign_id
    where r.workspace_id = ${workspaceId} ${source}
      ${filter.kind ? sql`and r.kind = ${filter.kind}` : sql``}
      ${filter.status ? sql`and r.status = ${filter.status}` : sql``}
      ${filter.createdFrom ? sql`and r.created_at >= ${filter.createdFrom}` : sql``}
      ${filter.createdBefore ? sql`and r.created_at < ${filter.createdBefore}` : sql``}
      ${cursor === undefined ? sql`` : newer ? sql`and r.campaign_id > ${cursor.newerThan}` : sql`and r.campaign_id < ${cursor.olderThan}`}
    order by r.campaign_id ${newer ? sql`asc` : sql`desc`}
    limit ${limit}`;
  const page = rows.map(named);
  return newer ? page.reverse() : page;
}

/** One batch of the workspace, whatever its kind (the caller refuses the wrong one). */
export async function findBatch(
  sql: Sql,
  workspaceId: number,
  batchId: number,
): Promise<ReportBatch | undefined> {
  const [batch] = await sql<StoredBatch[]>`
    select ${batchColumns(sql)} from report_batches r join campaigns c on c.id = r.campaign_id
    where r.campaign_id = ${batchId} and r.workspace_id = ${workspaceId}`;
  return batch && named(batch);
}

export interface DeliveryTotals {
  sent: number;
  delivered: number;
  /** Failed to send, or undelivered by receipt. */
  failed: number;
  /** Of the messages submitted in the window, those still without a receipt. */
  awaiting: number;
  /** `unknown` receipts (an unmapped status, or none came in time), by the receipt's time. */
  unknown: number;
  /** Recipients' replies received (STOP/START not counted), by the time they came. */
  replies: number;
}

/**
 * Delivery history of the workspace in the minutes from `from` to `to` (both included), each
 * event counted by its own timestamp: submission, receipt or failure.
 */
export async function sumDeliveryHistory(
  sql: Sql,
  workspaceId: number,
  from: Date,
  to: Date,
): Promise<DeliveryTotals> {
  const [totals] = await sql<DeliveryTotals[]>`
    select coalesce(sum(sent), 0) as sent, coalesce(sum(delivered), 0) as delivered,
           coalesce(sum(failed), 0) as failed, coalesce(sum(awaiting), 0) as awaiting,
           coalesce(sum(unknown), 0) as unknown, coalesce(sum(replies), 0) as replies
    from report_delivery_minutes
    where workspace_id = ${workspaceId} and minute >= ${from} and minute <= ${to}`;
  return totals as DeliveryTotals;
}

export interface CompletedCampaignTotals {
  campaigns: number;
  recipients: number;
  sent: number;
  failedToSend: number;
  delivered: number;
  deliveryFailed: number;
  deliveryUnknown: number;
  replies: number;
  canceled: number;
}

/** Named campaigns (never Quick Send) completed between `from` and `to`, with current counts. */
export async function sumCompletedCampaigns(
  sql: Sql,
  workspaceId: number,
  from: Date,
  to: Date,
): Promise<CompletedCampaignTotals> {
  const [totals] = await sql<CompletedCampaignTotals[]>`
    select count(*) as campaigns, coalesce(sum(recipients), 0) as recipients,
           coalesce(sum(sent), 0) as sent, coalesce(sum(failed_to_send), 0) as failed_to_send,
           coalesce(sum(delivered), 0) as delivered,
           coalesce(sum(delivery_failed), 0) as delivery_failed,
           coalesce(sum(delivery_unknown), 0) as delivery_unknown,
           coalesce(sum(replies), 0) as replies, coalesce(sum(canceled), 0) as canceled
    from report_batches
    where workspace_id = ${workspaceId} and kind = 'campaign'
      and completed_at >= ${from} and completed_at <= ${to}`;
  return totals as CompletedCampaignTotals;
}

export interface TeamCounts {
  totalMembers: number;
  activeMembers: number;
  pendingInvites: number;
}

/** Members (all, and those not suspended) and invitations still open at `at`. */
export async function countTeam(sql: Sql, workspaceId: number, at: Date): Promise<TeamCounts> {
  const [counts] = await sql<TeamCounts[]>`
    select
      (select count(*) from workspace_members where workspace_id = ${workspaceId}) as total_members,
      (select count(*) from workspace_members
        where workspace_id = ${workspaceId} and status = 'active') as active_members,
      (select count(*) from invitations
        where workspace_id = ${workspaceId} and accepted_at is null and revoked_at is null
          and expires_at > ${at}) as pending_invites`;
  return counts as TeamCounts;
}
