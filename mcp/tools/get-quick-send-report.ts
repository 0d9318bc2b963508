import { z } from 'zod';
import {
  batchCounts,
  batchSummaryFields,
  countsOf,
  generatedAt,
  loadBatch,
  QUICK_SEND_NAME,
  quickSendSource,
  routingFields,
  routingOf,
  sourceOf,
  summaryOf,
} from './batch-fields.js';
import { defineTool } from './tool.js';

const { id, name, status, purpose, created_at, completed_at } = batchSummaryFields(QUICK_SEND_NAME);

export const getQuickSendReport = defineTool({
  name: 'get_quick_send_report',
  title: 'Quick Send report',
  icon: 'quickSends',
  description:
    'Reports one unnamed batch by id, read live (the Quick Send tools cover API sends, source api, and console Quick Sends, source quick_send): source, name, status, purpose, routing (a direct provider or a failover route), created and completed times, recipient and delivery counts, and the delivery rate (delivered as a percentage of sent). The id of a campaign (a named batch) is refused; use get_campaign_report for those.',
  inputSchema: {
    quick_send_id: z
      .number()
      .int()
      .positive()
      .describe(
        'Id of the batch, as listed by list_recent_quick_sends (for an API send, data.message.id of the send response).',
      ),
  },
  outputSchema: {
    generated_at: generatedAt,
    quick_send: z
      .object({
        id,
        source: quickSendSource,
        name,
        status,
        purpose,
        ...routingFields,
        created_at,
        completed_at,
        ...batchCounts,
      })
      .describe('The batch and its counts.'),
  },
  permissions: ['campaigns.read'],
  async run(context, { quick_send_id }) {
    const row = await loadBatch(context, quick_send_id, 'quick_send');
    const { id, created_at, completed_at, ...identity } = summaryOf(row);
    return {
      generated_at: context.now().toISOString(),
      quick_send: {
        id,
        source: sourceOf(row),
        ...identity,
        ...routingOf(row),
        created_at,
        completed_at,
        ...countsOf(row),
      },
    };
  },
});
