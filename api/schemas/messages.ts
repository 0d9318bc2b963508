import { z } from 'zod';

/** SPEC §2.1: the message (campaign) object. */
export const campaignSchema = z.object({
  id: z.int().describe('Campaign id, used for the status lookup'),
  reference: z.string().nullable().describe('The customer reference given at send time'),
  status: z
    .enum(['queued', 'paused', 'completed'])
    .describe('Campaign processing status; not a handset delivery receipt'),
  total_recipients: z.int().describe('Recipients recorded on the campaign'),
  queued_count: z.int().describe('Messages currently queued'),
  sent_count: z
    .int()
    .describe('Messages submitted to a provider; not confirmed handset deliveries'),
  failed_count: z.int().describe('Messages that failed to send'),
  created_at: z.iso.datetime().describe('ISO 8601 timestamp'),
  completed_at: z.iso.datetime().nullable().describe('ISO 8601 timestamp; null while incomplete'),
});

export const campaignLookupResponseSchema = z.object({
  data: z.object({ message: campaignSchema }),
});
