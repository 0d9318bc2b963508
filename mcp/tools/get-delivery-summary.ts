import { z } from 'zod';
import { sumDeliveryHistory } from '../../db/reporting.js';
import { ratePercent } from '../../domain/delivery-rate.js';
import { daysInput, deliveryRatePercent, generatedAt, timestamp } from './batch-fields.js';
import { defineTool } from './tool.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

const outputSchema = {
  period_days: z.number().int().describe('Length of the period in days: 7 or 30.'),
  from: timestamp('Start of the period, rounded down to the minute (history is kept per minute)'),
  to: timestamp('End of the period: when the summary was calculated'),
  generated_at: generatedAt,
  period_type: z
    .literal('rolling')
    .describe('rolling: the period ends at the time of calculation, not on a calendar boundary.'),
  sent: z
    .number()
    .int()
    .describe('Messages submitted to a provider during the period (by submission time).'),
  delivered: z
    .number()
    .int()
    .describe('Delivered receipts dated within the period (by receipt time).'),
  failed: z
    .number()
    .int()
    .describe(
      'Messages that failed to send during the period plus undelivered receipts dated within it.',
    ),
  delivery_unknown: z
    .number()
    .int()
    .describe(
      'Receipts dated within the period whose status is unknown: an unmapped provider status, or no receipt came and the provider could not be asked. Counted in neither delivered, failed nor awaiting_delivery.',
    ),
  awaiting_delivery: z
    .number()
    .int()
    .describe('Of the messages submitted during the period, those still without a receipt.'),
  delivery_rate_percent: deliveryRatePercent.describe(
    'delivered as a percentage of sent, rounded to 2 decimals; 0 when nothing was sent. Each count has its own timestamps, so near the start of the period it can exceed 100.',
  ),
  replies: z
    .number()
    .int()
    .describe(
      "Recipients' replies received during the period (two-way messaging), STOP and START not counted.",
    ),
};

export type DeliverySummary = z.infer<z.ZodObject<typeof outputSchema>>;

export const getDeliverySummary = defineTool({
  name: 'get_delivery_summary',
  title: 'Delivery summary',
  icon: 'deliveries',
  description:
    'Rolling delivery totals of the whole workspace over the last 7 or 30 days, across every batch: campaigns, API sends and Quick Sends. Every message event counts by its own delivery-history timestamp: a submission when it was sent, a receipt when it was dated, a failure when it happened, so the totals describe activity within the period. This differs from get_completed_campaign_summary, which totals named campaigns by their completion time. The result may be reused for up to 30 seconds (by default); its generated_at, from and to then describe the original calculation.',
  inputSchema: { days: daysInput },
  outputSchema,
  permissions: [],
  async run(context, { days }) {
    const { workspaceId } = context.caller;
    const now = context.now();
    return context.deliverySummaries.reuseOrCompute(workspaceId, days, now, async () => {
      // Minute-aligned, so the per-minute history covers exactly the period reported.
      const from = new Date(Math.floor((now.getTime() - days * DAY_MS) / MINUTE_MS) * MINUTE_MS);
      const totals = await sumDeliveryHistory(context.sql, workspaceId, from, now);
      return {
        period_days: days,
        from: from.toISOString(),
        to: now.toISOString(),
        generated_at: now.toISOString(),
        period_type: 'rolling' as const,
        sent: totals.sent,
        delivered: totals.delivered,
        failed: totals.failed,
        delivery_unknown: totals.unknown,
        awaiting_delivery: totals.awaiting,
        delivery_rate_percent: ratePercent(totals.delivered, totals.sent),
        replies: totals.replies,
      };
    });
  },
});
