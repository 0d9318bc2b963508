/**
 * herald campaign recipients: a campaign's recipients and each one's status, a page at a time, as
 * GET /api/v1/messages/{campaign}/recipients lists them. The operator sees every workspace's
 * campaigns and full numbers (erased ones stay masked).
 */
import { listRecipients, presentRecipients } from '../../commands/messaging/campaign-recipients.js';
import { recipientQuerySchema } from '../../domain/recipient-listing.js';
import { parseRequest } from '../../domain/request-schema.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import { type CommandResult, idOption, type Options, text } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

/** herald campaign recipients --id <id> [--status <s>] [--limit <n>] [--cursor <c>] */
export async function campaignRecipients(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const campaignId = idOption(options, 'campaign');
  const query = parseRequest(recipientQuerySchema, {
    status: text(options, 'status'),
    cursor: text(options, 'cursor'),
    limit: text(options, 'limit'),
  });
  if (!query.ok) throw new UsageError(Object.values(query.errors).flat().join(' '));
  const listing = await listRecipients(context, {
    campaignId,
    workspaceId: null,
    query: query.value,
    fullNumbers: true,
  });
  if (!listing) throw new UsageError(`There is no campaign ${campaignId}`);
  const shown = presentRecipients(listing);
  const lines = shown.recipients.map((row) =>
    [
      row.recipient.padEnd(16),
      row.status.padEnd(11),
      row.provider ?? '-',
      row.sent_at ?? '-',
      row.receipt_at ?? '-',
      row.error_code ?? '',
    ]
      .join('  ')
      .trimEnd(),
  );
  return {
    json: shown,
    human: [
      ...(lines.length ? lines : ['No recipients on this page']),
      ...(shown.next_cursor ? [`More: --cursor ${shown.next_cursor}`] : []),
    ].join('\n'),
  };
}

export const CAMPAIGN_RECIPIENT_COMMANDS: AdminCommand[] = [
  {
    name: 'campaign recipients',
    run: campaignRecipients,
    synopses: [
      [
        [
          required('id', '<id>'),
          optional('status', 'queued|sent|delivered|undelivered|failed|canceled|excluded'),
        ],
        [optional('limit', '1-1000'), optional('cursor', '<next_cursor>')],
      ],
    ],
    summary: 'each recipient and its status',
  },
];
