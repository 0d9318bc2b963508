import { z } from 'zod';
import {
  batchCounts,
  batchSummaryFields,
  countsOf,
  generatedAt,
  loadBatch,
  routingFields,
  routingOf,
  summaryOf,
} from './batch-fields.js';
import { defineTool } from './tool.js';

const { id, name, status, purpose, created_at, completed_at } =
  batchSummaryFields('Campaign name.');

export const getCampaignReport = defineTool({
  name: 'get_campaign_report',
  title: 'Campaign report',
  icon: 'campaigns',
  description:
    'Reports one named campaign by id, read live: name, status, purpose, routing (a direct provider or a failover route), created and completed times, recipient and delivery counts, and the delivery rate (delivered as a percentage of sent). The id of an API send or a Quick Send (an unnamed batch) is refused; use get_quick_send_report for those.',
  inputSchema: {
    campaign_id: z
      .number()
      .int()
      .positive()
      .describe('Id of the campaign, as listed by list_recent_campaigns.'),
  },
  outputSchema: {
    generated_at: generatedAt,
    campaign: z
      .object({
        id,
        name,
        status,
        purpose,
        ...routingFields,
        created_at,
        completed_at,
        ...batchCounts,
      })
      .describe('The campaign and its counts.'),
  },
  permissions: ['campaigns.read'],
  async run(context, { campaign_id }) {
    const row = await loadBatch(context, campaign_id, 'campaign');
    const { created_at, completed_at, ...identity } = summaryOf(row);
    return {
      generated_at: context.now().toISOString(),
      campaign: { ...identity, ...routingOf(row), created_at, completed_at, ...countsOf(row) },
    };
  },
});
