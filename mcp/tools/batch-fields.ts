/**
 * What the campaign and Quick Send tools share: the described output fields of a batch, the
 * mapping from a report_batches row, and the lookup that refuses an id of the other kind.
 */
import { z } from 'zod';
import { type BatchKind, findBatch, type ReportBatch } from '../../db/reporting.js';
import { CAMPAIGN_STATUSES } from '../../domain/campaign-status.js';
import { ratePercent } from '../../domain/delivery-rate.js';
import { type ToolContext, ToolRefusal } from './tool.js';

export const timestamp = (what: string) => z.string().describe(`${what} (ISO 8601, UTC).`);

export const generatedAt = timestamp('When this result was calculated');

export const limitInput = z
  .number()
  .int()
  .min(1)
  .max(50)
  .default(20)
  .describe('How many to return, newest first: 1 to 50 (default 20).');

export const daysInput = z
  .literal([7, 30])
  .default(30)
  .describe('Length of the period ending now, in days: 7 or 30 (default 30).');

export const deliveryRatePercent = z
  .number()
  .describe('delivered as a percentage of sent, rounded to 2 decimals; 0 when nothing was sent.');

/** Counts of one batch, or a sum of batches. */
export const batchCounts = {
  recipients: z.number().int().describe('Recipients recorded on the batch.'),
  sent: z
    .number()
    .int()
    .describe('Messages submitted to a provider; not confirmed handset deliveries.'),
  failed_to_send: z.number().int().describe('Messages that could not be submitted to a provider.'),
  delivered: z.number().int().describe('Sent messages whose delivery receipt says delivered.'),
  delivery_failed: z
    .number()
    .int()
    .describe('Sent messages whose delivery receipt says undelivered.'),
  delivery_unknown: z
    .number()
    .int()
    .describe(
      'Sent messages whose delivery status is unknown: the provider reported a status that maps to neither, or no receipt came and the provider could not be asked (given up 48 hours after sending, by default).',
    ),
  awaiting_delivery: z
    .number()
    .int()
    .describe(
      'Sent messages without a delivery receipt yet: sent − delivered − delivery_failed − delivery_unknown.',
    ),
  delivery_rate_percent: deliveryRatePercent,
  canceled: z
    .number()
    .int()
    .describe('Messages never sent because the batch was canceled (counted in recipients only).'),
  replies: z
    .number()
    .int()
    .describe(
      "Recipients' replies to the batch (two-way messaging), STOP and START not counted: each reply counts for the latest campaign that sent to its number through its provider.",
    ),
};

type Counts = Pick<
  ReportBatch,
  | 'recipients'
  | 'sent'
  | 'failedToSend'
  | 'delivered'
  | 'deliveryFailed'
  | 'deliveryUnknown'
  | 'replies'
  | 'canceled'
>;

export function countsOf(row: Counts) {
  return {
    recipients: row.recipients,
    sent: row.sent,
    failed_to_send: row.failedToSend,
    delivered: row.delivered,
    delivery_failed: row.deliveryFailed,
    delivery_unknown: row.deliveryUnknown,
    awaiting_delivery: row.sent - row.delivered - row.deliveryFailed - row.deliveryUnknown,
    delivery_rate_percent: ratePercent(row.delivered, row.sent),
    canceled: row.canceled,
    replies: row.replies,
  };
}

export const batchStatus = z
  .enum(CAMPAIGN_STATUSES)
  .describe(
    'Processing status, not a handset receipt: paused (dispatch not confirmed; needs review), scheduled (waiting for its send time), queued (sending), completed, or canceled (stopped; messages it left unsent are not counted as sent or failed).',
  );
export const batchPurpose = z.enum(['transactional', 'marketing']).describe('Message purpose.');
export const quickSendSource = z
  .enum(['quick_send', 'api', 'unknown'])
  .describe(
    "How the batch was sent: api (an API send, POST /api/v1/messages), quick_send (the console's Quick Send page), or unknown (older records without source metadata).",
  );

export const QUICK_SEND_NAME =
  'Name given in the console, else the API send\'s reference, else "API send #<id>" ("Quick Send #<id>" for an unnamed Quick Send).';

export function sourceOf(row: ReportBatch): z.infer<typeof quickSendSource> {
  return row.source ?? 'unknown';
}

/** Identification and timestamps of a batch, as in every list item and report. */
export function batchSummaryFields(nameDescription: string) {
  return {
    id: z.number().int().describe('Batch id.'),
    name: z.string().describe(nameDescription),
    status: batchStatus,
    purpose: batchPurpose,
    created_at: timestamp('When the batch was created'),
    completed_at: z
      .string()
      .nullable()
      .describe('When every message was settled (ISO 8601, UTC); null while incomplete.'),
  };
}

const namedRoute = (what: string) =>
  z
    .object({
      name: z.string().describe(`Display name of the ${what}.`),
      slug: z.string().describe(`Slug of the ${what} in this workspace.`),
    })
    .nullable();

export const routingFields = {
  routing_type: z
    .enum(['direct', 'failover'])
    .describe('direct: one provider; failover: an ordered list of providers tried in turn.'),
  provider: namedRoute('provider').describe(
    "The provider of a direct send (slug own is the service's own provider); null for failover routing.",
  ),
  failover_route: namedRoute('failover route').describe(
    'The failover route of a failover send; null for direct routing.',
  ),
};

export function summaryOf(row: ReportBatch) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    purpose: row.purpose,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

export function routingOf(row: ReportBatch) {
  // A provider or route deleted since the send keeps its slug; the slug then names it.
  return {
    routing_type: row.routingType,
    provider: row.providerSlug
      ? { name: row.providerName ?? row.providerSlug, slug: row.providerSlug }
      : null,
    failover_route: row.failoverRouteSlug
      ? { name: row.failoverRouteName ?? row.failoverRouteSlug, slug: row.failoverRouteSlug }
      : null,
  };
}

const KINDS: Record<BatchKind, { label: string; article: string; reportTool: string }> = {
  campaign: { label: 'campaign', article: 'a campaign', reportTool: 'get_campaign_report' },
  quick_send: { label: 'Quick Send', article: 'a Quick Send', reportTool: 'get_quick_send_report' },
};

/** The batch `id` of the caller's workspace, refused when missing or of the other kind. */
export async function loadBatch(
  context: ToolContext,
  id: number,
  wanted: BatchKind,
): Promise<ReportBatch> {
  const batch = await findBatch(context.sql, context.caller.workspaceId, id);
  // Another workspace's batch reads as missing: ids must not reveal other tenants.
  if (!batch)
    throw new ToolRefusal('not_found', `No ${KINDS[wanted].label} ${id} in this workspace.`);
  if (batch.kind !== wanted) {
    const actual = KINDS[batch.kind];
    throw new ToolRefusal(
      'validation_failed',
      `Batch ${id} is ${actual.article}, not ${KINDS[wanted].article}; use ${actual.reportTool}.`,
    );
  }
  return batch;
}
