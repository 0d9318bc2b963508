import { z } from 'zod';
import { sumCompletedCampaigns } from '../../db/reporting.js';
import { batchCounts, countsOf, daysInput, generatedAt, timestamp } from './batch-fields.js';
import { defineTool } from './tool.js';

const DAY_MS = 86_400_000;

export const getCompletedCampaignSummary = defineTool({
  name: 'get_completed_campaign_summary',
  title: 'Completed campaign summary',
  icon: 'campaigns',
  description:
    'Totals of the named campaigns that completed in the last 7 or 30 days, chosen by their completion time, with the recipient and delivery counts of those campaigns as they stand now (receipts that arrive after completion still count). API sends and Quick Sends (unnamed batches) are excluded. This describes a different population from get_delivery_summary, which counts every message event of every batch (campaigns, API sends and Quick Sends) by its own delivery-history timestamp.',
  inputSchema: { days: daysInput },
  outputSchema: {
    period_days: z.number().int().describe('Length of the period in days: 7 or 30.'),
    from: timestamp('Start of the period'),
    to: timestamp('End of the period: when the summary was calculated'),
    generated_at: generatedAt,
    campaigns: z.number().int().describe('Named campaigns completed within the period.'),
    ...batchCounts,
    recipients: z.number().int().describe('Recipients of those campaigns.'),
  },
  permissions: ['reports.read'],
  async run(context, { days }) {
    const now = context.now();
    const from = new Date(now.getTime() - days * DAY_MS);
    const totals = await sumCompletedCampaigns(context.sql, context.caller.workspaceId, from, now);
    return {
      period_days: days,
      from: from.toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      campaigns: totals.campaigns,
      ...countsOf(totals),
    };
  },
});
