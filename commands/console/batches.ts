/**
 * The console's Campaigns pages: the workspace's batches (named campaigns and Quick Send / API
 * batches) a page at a time under a filter, a batch's report (counters from the reporting tables,
 * failures by error) and its recipients, masked unless the member may read them.
 */
import { findCampaignView } from '../../db/campaigns.js';
import {
  type BatchRecipient,
  batchesWithinValidity,
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
import {
  awaitingReceipt,
  type DeliveryBreakdown,
  deliveryBreakdown,
} from '../../domain/delivery-breakdown.js';
import { shownRatePercent } from '../../domain/delivery-rate.js';
import { receiptErrorCode, sendErrorCode } from '../../domain/error-codes.js';
import { NUMBER_IN_TEXT, numberShown, textShown } from '../../domain/phone.js';
import type { CommandDeps } from '../deps.js';

export type { BatchCursor, BatchFilter, DeliveryBreakdown, ReportBatch };

type Deps = Pick<CommandDeps, 'sql'>;

const BATCH_PAGE_SIZE = 25;
const RECIPIENT_PAGE_SIZE = 50;

export interface ListedBatch extends ReportBatch {
  breakdown: DeliveryBreakdown;
  /** Its figures may still move (liveBatchIds). */
  live: boolean;
}

export interface BatchPage {
  batches: ListedBatch[];
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
    batches: await listed(deps, batches),
    olderThan: newer || more ? last : null,
    newerThan: cursor === undefined || (newer && !more) ? null : first,
  };
}

/** The failures of one error code: how many, and one of them as the viewer may see it. */
export interface FailureGroup {
  /** `send`: the provider refused or the send failed; `delivery`: an undelivered receipt. */
  stage: 'send' | 'delivery';
  /** The code (domain/error-codes.ts), or for an error without one its text, numbers as `#`. */
  code: string;
  /** The code in words; null when the catalogue does not know it. */
  meaning: string | null;
  count: number;
  /** One error of the group, its numbers masked unless the member has recipients.read. */
  example: string;
}

/** Batches with their delivery breakdown and whether their figures may still move. */
export async function listed(deps: Deps, batches: ReportBatch[]): Promise<ListedBatch[]> {
  const live = await liveBatchIds(deps, batches);
  return batches.map((batch) => ({
    ...batch,
    breakdown: deliveryBreakdown(batch),
    live: live.has(batch.id),
  }));
}

export interface BatchReport {
  batch: ReportBatch;
  awaiting: number;
  /** Null until something was sent (shown `–`). */
  deliveryRatePercent: number | null;
  /** Delivered, undelivered, failed, awaiting (the batch page's bar). */
  breakdown: DeliveryBreakdown;
  failures: FailureGroup[];
  /** While the batch is scheduled: when it goes out. */
  scheduledAt: Date | null;
  /** Messages a cancel left unsent. */
  canceled: number;
  /** A canceled batch's messages claimed for submission before the cancel, still settling. */
  settling: number;
  /**
   * Whether the figures may still move: not sent through yet, claimed messages settling, or
   * receipts awaited while the batch is inside its validity window.
   */
  live: boolean;
  /** Whether a cancel would stop something: scheduled, or still sending. */
  cancelable: boolean;
}

const CANCELABLE_STATUSES: readonly CampaignStatus[] = ['paused', 'scheduled', 'queued'];

/** Failures by code: groups of the same code (N numbers rejected alike) summed, most first. */
async function failuresByCode(
  deps: Deps,
  batchId: number,
  fullNumbers: boolean,
): Promise<FailureGroup[]> {
  const byCode = new Map<string, FailureGroup>();
  for (const group of await failureGroups(deps.sql, batchId, NUMBER_IN_TEXT)) {
    const known =
      group.stage === 'delivery' ? receiptErrorCode(group.shape) : sendErrorCode(group.shape);
    const code = known?.code ?? group.shape;
    const key = `${group.stage} ${code}`;
    const seen = byCode.get(key);
    if (seen) seen.count += group.count;
    else
      byCode.set(key, {
        stage: group.stage,
        code,
        meaning: known?.meaning ?? null,
        count: group.count,
        example: textShown(group.example, fullNumbers),
      });
  }
  // Most first; send failures before receipts, then by code, so the order never wavers.
  return [...byCode.values()].sort(
    (a, b) =>
      b.count - a.count ||
      (a.stage === b.stage ? 0 : a.stage === 'send' ? -1 : 1) ||
      a.code.localeCompare(b.code),
  );
}

/** Undefined when the workspace has no such batch. */
export async function loadBatchReport(
  deps: Deps,
  workspaceId: number,
  batchId: number,
  options: { fullNumbers?: boolean } = {},
): Promise<BatchReport | undefined> {
  if (!Number.isSafeInteger(batchId) || batchId <= 0) return undefined;
  const batch = await findBatch(deps.sql, workspaceId, batchId);
  if (!batch) return undefined;
  const failures =
    batch.failedToSend + batch.deliveryFailed > 0
      ? await failuresByCode(deps, batchId, options.fullNumbers ?? false)
      : [];
  // The reporting row has neither the schedule nor canceled messages: the campaign's own counts.
  const view =
    batch.status === 'scheduled' || batch.status === 'canceled'
      ? await findCampaignView(deps.sql, workspaceId, batchId)
      : undefined;
  const settling = batch.status === 'canceled' ? (view?.queuedCount ?? 0) : 0;
  const awaiting = awaitingReceipt(batch);
  return {
    batch,
    awaiting,
    deliveryRatePercent: shownRatePercent(batch.delivered, batch.sent),
    breakdown: deliveryBreakdown(batch),
    failures,
    scheduledAt: batch.status === 'scheduled' ? (view?.scheduledAt ?? null) : null,
    canceled: view?.canceledCount ?? 0,
    settling,
    live: settling > 0 || (await liveBatchIds(deps, [batch])).has(batch.id),
    cancelable: CANCELABLE_STATUSES.includes(batch.status),
  };
}

/**
 * The batches whose figures may still move: not through yet, or receipts awaited while inside
 * the validity window (after it, receipt reconciliation settles the rest as `unknown` in its own
 * time, and the page stops asking).
 */
export async function liveBatchIds(deps: Deps, batches: ReportBatch[]): Promise<Set<number>> {
  const moving = batches.filter((batch) => !FINAL_CAMPAIGN_STATUSES.includes(batch.status));
  const awaiting = batches.filter(
    (batch) => FINAL_CAMPAIGN_STATUSES.includes(batch.status) && awaitingReceipt(batch) > 0,
  );
  const valid = await batchesWithinValidity(
    deps.sql,
    awaiting.map((batch) => batch.id),
  );
  return new Set([...moving.map((batch) => batch.id), ...valid]);
}

export interface RecipientRow extends Omit<BatchRecipient, 'recipient'> {
  /** The number in full, or masked (maskedNumber) when the member may not read it. */
  number: string;
  /** Why it failed, its numbers masked as `number` is. */
  error: string | null;
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
    recipients: page.map(({ recipient, error, ...row }) => ({
      ...row,
      number: numberShown(recipient, options.fullNumbers),
      error: error === null ? null : textShown(error, options.fullNumbers),
    })),
    afterSeq: rows.length > RECIPIENT_PAGE_SIZE ? (page.at(-1)?.seq ?? null) : null,
  };
}
