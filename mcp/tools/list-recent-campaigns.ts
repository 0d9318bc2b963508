import { z } from 'zod';
import { listRecentBatches } from '../../db/reporting.js';
import {
  batchCounts,
  batchSummaryFields,
  countsOf,
  limitInput,
  summaryOf,
} from './batch-fields.js';
import { defineTool } from './tool.js';

const campaignItem = z.object({
  ...batchSummaryFields('Campaign name.'),
  ...batchCounts,
});

export const listRecentCampaigns = defineTool({
  name: 'list_recent_campaigns',
  title: 'List recent campaigns',
  icon: 'campaigns',
  description:
    'Lists the most recent named campaigns of this workspace, newest first, with status, recipient count and delivery counts as they stand now. API sends and Quick Sends are not included (use list_recent_quick_sends). sent counts submissions to a provider; delivered and delivery_failed come from delivery receipts; awaiting_delivery is sent messages without a receipt yet.',
  inputSchema: { limit: limitInput },
  outputSchema: {
    campaigns: z.array(campaignItem).describe('Campaigns, newest first.'),
  },
  permissions: ['campaigns.read'],
  async run(context, { limit }) {
    const rows = await listRecentBatches(
      context.sql,
      context.caller.workspaceId,
      'campaign',
      limit,
    );
    return { campaigns: rows.map((row) => ({ ...summaryOf(row), ...countsOf(row) })) };
  },
});
