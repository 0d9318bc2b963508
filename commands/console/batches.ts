/**
 * The console's Campaigns pages: the workspace's batches (named campaigns and Quick Send / API
 * batches) a page at a time under a filter, a batch's report (counters from the reporting tables,
 * failures by error) and its recipients, masked unless the member may read them.
 */
import { findCampaignView } from '../../db/campaigns.js';
import {
  type BatchRecipient,
  type FailureGroup,
  failureGroups,
  listBatchRecipients,
} from '../../db/console-reports.js';
import {
  type BatchCursor,
  type BatchFilter,
  findBatch,
  listBatchPage,
  type ReportBatch,
} from '../../db/reporting.js';
import { type CampaignStatus, FINAL_CAMPAIGN_STATUSES } from '../../domain/campaign-status.js';
import { ratePercent } from '../../domain/delivery-rate.js';
import { numberShown } from '../../domain/phone.js';
import type { CommandDeps } from '../deps.js';

export type { BatchCursor, BatchFilter, FailureGroup, ReportBatch };

type Deps = Pick<CommandDeps, 'sql'>;

const BATCH_PAGE_SIZE = 25;
const RECIPIENT_PAGE_SIZE = 50;

export interface BatchPage {
  batches: ReportBatch[];
  /** The cursor of the next older page, or null on the last. */
  olderThan: number | null;
  /** The cursor of the next newer page, or null on the first. */
  newerThan: number | null;
}

/** One page of the workspace's batches under `filter`, newest first. */
export async function listBatches(
  deps: Deps,
  workspaceId: number,
  filter: BatchFilter,
  cursor: BatchCursor,
): Promise<BatchPage> {
  // One more than shown tells whether a further page exists in the direction read.
  const rows = await listBatchPage(deps.sql, workspaceId, filter, cursor, BATCH_PAGE_SIZE + 1);
  const newer = cursor !== undefined && 'newerThan' in cursor;
  const more = rows.length > BATCH_PAGE_SIZE;
  // Read newest first either way; going newer, the extra row is the newest (first) one.
  const batches = more ? (newer ? rows.slice(1) : rows.slice(0, BATCH_PAGE_SIZE)) : rows;
  const first = batches[0]?.id ?? null;
  const last = batches.at(-1)?.id ?? null;
  return {
    batches,
    olderThan: newer || more ? last : null,
    newerThan: cursor === undefined || (newer && !more) ? null : first,
  };
}

export interface BatchReport {
  batch: ReportBatch;
  awaiting: number;
  deliveryRatePercent: number;
  failures: FailureGroup[];
  /** While the batch is scheduled: when it goes out. */
  scheduledAt: Date | null;
  /** Messages a cancel left unsent. */
  canceled: number;
  /** A canceled batch's messages claimed for submission before the cancel, still settling. */
  settling: number;
  /** Whether the counters may still move: not sent through yet, or claimed messages settling. */
  live: boolean;
  /** Whether a cancel would stop something: scheduled, or still sending. */
  cancelable: boolean;
}

const CANCELABLE_STATUSES: readonly CampaignStatus[] = ['paused', 'scheduled', 'queued'];

/** Undefined when the workspace has no such batch. */
export async function loadBatchReport(
  deps: Deps,
  workspaceId: number,
  batchId: number,
): Promise<BatchReport | undefined> {
  if (!Number.isSafeInteger(batchId) || batchId <= 0) return undefined;
  const batch = await findBatch(deps.sql, workspaceId, batchId);
  if (!batch) return undefined;
  const failures =
    batch.failedToSend + batch.deliveryFailed > 0 ? await failureGroups(deps.sql, batchId) : [];
  // The reporting row has neither the schedule nor canceled messages: the campaign's own counts.
  const view =
    batch.status === 'scheduled' || batch.status === 'canceled'
      ? await findCampaignView(deps.sql, workspaceId, batchId)
      : undefined;
  const settling = batch.status === 'canceled' ? (view?.queuedCount ?? 0) : 0;
  return {
    batch,
    // As the MCP reports count it (mcp/tools/batch-fields.ts): an unknown receipt is not awaited.
    awaiting: Math.max(
      0,
      batch.sent - batch.delivered - batch.deliveryFailed - batch.deliveryUnknown,
    ),
    deliveryRatePercent: ratePercent(batch.delivered, batch.sent),
    failures,
    scheduledAt: batch.status === 'scheduled' ? (view?.scheduledAt ?? null) : null,
    canceled: view?.canceledCount ?? 0,
    settling,
    live: !FINAL_CAMPAIGN_STATUSES.includes(batch.status) || settling > 0,
    cancelable: CANCELABLE_STATUSES.includes(batch.status),
  };
}

export interface RecipientRow extends Omit<BatchRecipient, 'recipient'> {
  /** The number in full, or masked (maskedNumber) when the member may not read it. */
  number: string;
}

export interface RecipientPage {
  recipients: RecipientRow[];
  /** The cursor of the next page (the last seq shown), or null on the last. */
  afterSeq: number | null;
}

/**
 * One page of the batch's recipients in the order they were given. The numbers are masked here,
 * before any page sees them, unless `fullNumbers` (the member has recipients.read).
 */
export async function loadBatchRecipients(
  deps: Deps,
  batchId: number,
  options: { afterSeq: number; fullNumbers: boolean },
): Promise<RecipientPage> {
  const rows = await listBatchRecipients(
    deps.sql,
    batchId,
    options.afterSeq,
    RECIPIENT_PAGE_SIZE + 1,
  );
  const page = rows.slice(0, RECIPIENT_PAGE_SIZE);
  return {
    recipients: page.map(({ recipient, ...row }) => ({
      ...row,
      number: numberShown(recipient, options.fullNumbers),
    })),
    afterSeq: rows.length > RECIPIENT_PAGE_SIZE ? (page.at(-1)?.seq ?? null) : null,
  };
}
