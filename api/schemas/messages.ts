import { z } from 'zod';
import { CAMPAIGN_STATUSES } from '../../domain/campaign-status.js';
import { messageAnswer, validationAnswer } from './common.js';

/** docs/spec.md §2.1: the message (batch) object. */
export const campaignSchema = z.object({
  id: z.int().describe('The batch id (the path calls it {campaign}), used for the lookup'),
  reference: z.string().nullable().describe('The customer reference given at send time'),
  status: z
    .enum(CAMPAIGN_STATUSES)
    .describe(
      "The batch's processing status, not a handset delivery receipt: paused (saved, dispatch not confirmed yet), scheduled (waiting for scheduled_at), queued (sending), completed, canceled",
    ),
  total_recipients: z.int().describe('Recipients recorded on the batch'),
  queued_count: z.int().describe('Messages currently queued'),
  sent_count: z
    .int()
    .describe('Messages submitted to a provider; not confirmed handset deliveries'),
  failed_count: z.int().describe('Messages that failed to send'),
  canceled_count: z.int().describe('Messages never sent because the batch was canceled'),
  delivered_count: z.int().describe('Sent messages whose delivery receipt said delivered'),
  undelivered_count: z
    .int()
    .describe('Sent messages whose delivery receipt said undelivered (also counted in sent_count)'),
  created_at: z.iso.datetime().describe('ISO 8601 timestamp'),
  scheduled_at: z.iso
    .datetime()
    .nullable()
    .describe('When a batch sent with send_at goes out (ISO 8601); null when sent at once'),
  completed_at: z.iso
    .datetime()
    .nullable()
    .describe('ISO 8601 timestamp of completion or cancelation; null while neither'),
});

/** A batch of 3 sent at once: 2 delivered, 1 still awaiting its receipt. */
const COMPLETED_BATCH = {
  id: 42,
  reference: 'order-1234',
  status: 'completed',
  total_recipients: 3,
  queued_count: 0,
  sent_count: 3,
  failed_count: 0,
  canceled_count: 0,
  delivered_count: 2,
  undelivered_count: 0,
  created_at: '2026-11-27T09:00:00.000Z',
  scheduled_at: null,
  completed_at: '2026-11-27T09:00:02.000Z',
} as const;

const campaignResponse = z.object({ data: z.object({ message: campaignSchema }) });

export const campaignLookupResponseSchema = campaignResponse.meta({
  examples: [{ data: { message: COMPLETED_BATCH } }],
});

/** A batch canceled while sending: 200 sent before, 2 claimed then, the rest canceled. */
export const campaignCanceledResponseSchema = campaignResponse.meta({
  examples: [
    {
      data: {
        message: {
          ...COMPLETED_BATCH,
          reference: 'spring-sale',
          status: 'canceled',
          total_recipients: 1000,
          queued_count: 2,
          sent_count: 200,
          canceled_count: 798,
          delivered_count: 180,
          undelivered_count: 3,
          completed_at: '2026-11-27T09:00:12.000Z',
        },
      },
    },
  ],
});

export const cancelConflictResponse = messageAnswer(
  'The campaign has already completed',
  'Campaign 42 has already completed and cannot be canceled.',
);

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

export const sendResponseSchema = z
  .object({
    message: z.string(),
    data: z.object({ message: campaignSchema, queue: queueSchema }),
  })
  .meta({
    examples: [
      {
        message: 'Messages queued for sending.',
        data: {
          message: {
            ...COMPLETED_BATCH,
            status: 'queued',
            queued_count: 3,
            sent_count: 0,
            delivered_count: 0,
            completed_at: null,
          },
          queue: {
            success: true,
            campaign_id: 42,
            batch_id: '9b2f4c1e-7d3a-4e8b-a6f0-5c1d2e3f4a5b',
            total_recipients: 3,
            requested_recipients: 3,
            excluded_recipients: 0,
            message: '3 messages queued for sending.',
          },
        },
      },
    ],
  });

export const sendRefusedResponse = validationAnswer(
  'recipients.1',
  'The recipients.1 field must be a valid E.164 phone number.',
);
