import { z } from 'zod';
import { listRecentBatches } from '../../db/reporting.js';
import {
  batchCounts,
  batchSummaryFields,
  countsOf,
  limitInput,
  QUICK_SEND_NAME,
  quickSendSource,
  sourceOf,
  summaryOf,
} from './batch-fields.js';
import { defineTool } from './tool.js';

const { id, ...summary } = batchSummaryFields(QUICK_SEND_NAME);
const quickSendItem = z.object({ id, source: quickSendSource, ...summary, ...batchCounts });

export const listRecentQuickSends = defineTool({
  name: 'list_recent_quick_sends',
  title: 'List recent Quick Sends',
  icon: 'quickSends',
  description:
    'Lists the most recent unnamed batches of this workspace, newest first: the Quick Send tools cover API sends (source api, POST /api/v1/messages) and console Quick Sends (source quick_send; unknown for older records). Each has its status, recipient count and delivery counts as they stand now. Named campaigns are not included (use list_recent_campaigns).',
  inputSchema: { limit: limitInput },
  outputSchema: {
    quick_sends: z.array(quickSendItem).describe('API sends and Quick Sends, newest first.'),
  },
  permissions: ['campaigns.read'],
  async run(context, { limit }) {
    const rows = await listRecentBatches(
      context.sql,
      context.caller.workspaceId,
      'quick_send',
      limit,
    );
    return {
      quick_sends: rows.map((row) => {
        const { id, ...summary } = summaryOf(row);
        return { id, source: sourceOf(row), ...summary, ...countsOf(row) };
      }),
    };
  },
});
