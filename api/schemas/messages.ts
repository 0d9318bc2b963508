import { z } from 'zod';
import { CAMPAIGN_STATUSES } from '../../domain/campaign-status.js';

/** SPEC §2.1: the message (campaign) object. */
export const campaignSchema = z.object({
  id: z.int().describe('Campaign id, used for the status lookup'),
  reference: z.string().nullable().describe('The customer reference given at send time'),
  status: z
    .enum(CAMPAIGN_STATUSES)
    .describe(
      'Campaign processing status, not a handset delivery receipt: paused (saved, dispatch not confirmed yet), scheduled (waiting for scheduled_at), queued (sending), completed, canceled',
    ),
  total_recipients: z.int().describe('Recipients recorded on the campaign'),
  queued_count: z.int().describe('Messages currently queued'),
  sent_count: z
    .int()
    .describe('Messages submitted to a provider; not confirmed handset deliveries'),
  failed_count: z.int().describe('Messages that failed to send'),
  canceled_count: z.int().describe('Messages never sent because the campaign was canceled'),
  delivered_count: z.int().describe('Sent messages whose delivery receipt said delivered'),
  undelivered_count: z
    .int()
    .describe('Sent messages whose delivery receipt said undelivered (also counted in sent_count)'),
  created_at: z.iso.datetime().describe('ISO 8601 timestamp'),
  scheduled_at: z.iso
    .datetime()
    .nullable()
    .describe('When a campaign sent with send_at goes out (ISO 8601); null when sent at once'),
  completed_at: z.iso
    .datetime()
    .nullable()
    .describe('ISO 8601 timestamp of completion or cancelation; null while neither'),
});

export const campaignLookupResponseSchema = z.object({
  data: z.object({ message: campaignSchema }),
});

export const queueSchema = z.object({
  success: z.boolean().describe('False means the dispatch could not be confirmed'),
  campaign_id: z.int().describe('Same as data.message.id'),
  batch_id: z.string().optional().describe('Batch identifier (when success is true)'),
  total_recipients: z.int().optional(),
  requested_recipients: z.int().optional(),
  excluded_recipients: z
    .int()
    .optional()
    .describe('Recipients excluded from the queued send (opted out)'),
  message: z.string().describe('Human-readable text'),
});

export const sendResponseSchema = z.object({
  message: z.string(),
  data: z.object({ message: campaignSchema, queue: queueSchema }),
});
