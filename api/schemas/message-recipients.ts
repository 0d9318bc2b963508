import { z } from 'zod';
import { RECIPIENT_STATUSES } from '../../domain/recipient-listing.js';
import { validationAnswer } from './common.js';

/** The query is read by the CLI too, so it lives in domain/. */
export { recipientQuerySchema } from '../../domain/recipient-listing.js';

export const recipientSchema = z.object({
  recipient: z
    .string()
    .describe(
      'The number in E.164 with the recipients:read ability, else masked as •••• 1234; an erased number is masked either way',
    ),
  status: z
    .enum(RECIPIENT_STATUSES)
    .describe(
      'queued, sent (submitted, no delivered or undelivered receipt yet), delivered, undelivered (from the receipt), failed (not submitted), canceled, or excluded (left out at send time: opted out of marketing)',
    ),
  error_code: z
    .string()
    .nullable()
    .describe(
      "Why it failed or was canceled (Herald's or the provider's text), the receipt's error code when undelivered (or an unknown receipt's), opted_out when excluded; else null",
    ),
  provider: z.string().nullable().describe('Slug of the provider that took or refused it'),
  sent_at: z.iso.datetime().nullable().describe('When a provider accepted it'),
  receipt_at: z.iso.datetime().nullable().describe("The delivery receipt's time"),
});

const EXAMPLE = {
  data: {
    recipients: [
      {
        recipient: '•••• 5678',
        status: 'delivered',
        error_code: null,
        provider: 'own',
        sent_at: '2026-11-27T09:00:01.120Z',
        receipt_at: '2026-11-27T09:00:03.480Z',
      },
      {
        recipient: '•••• 5679',
        status: 'undelivered',
        error_code: 'EC_ABSENT',
        provider: 'own',
        sent_at: '2026-11-27T09:00:01.130Z',
        receipt_at: '2026-11-27T09:00:04.020Z',
      },
      {
        recipient: '•••• 5680',
        status: 'excluded',
        error_code: 'opted_out',
        provider: null,
        sent_at: null,
        receipt_at: null,
      },
    ],
    next_cursor: 'MTAw',
  },
};

export const recipientListingResponseSchema = z
  .object({
    data: z.object({
      recipients: z.array(recipientSchema).describe('In the order the batch holds them'),
      next_cursor: z
        .string()
        .nullable()
        .describe('Pass as cursor for the next page; null on the last page'),
    }),
  })
  .meta({ examples: [EXAMPLE] });

export const recipientQueryRefusedResponse = validationAnswer(
  'limit',
  'The limit field must be between 1 and 1000.',
);
