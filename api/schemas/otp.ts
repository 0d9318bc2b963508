import { z } from 'zod';
import { ERROR_CATALOGUE } from '../../domain/errors.js';
import {
  messageAnswer,
  messageOnlySchema,
  validationAnswer,
  validationErrorSchema,
} from './common.js';

/** docs/spec.md §2.3, with the billing object's fields named as documented in docs/api.md. */
export const otpRequestSchema = z.object({
  request_id: z.uuid().describe('Stable OTP request identifier; save it for verification'),
  status: z
    .enum(['accepted', 'pending', 'failed'])
    .describe('pending means acceptance is uncertain; retry with the same Idempotency-Key'),
  expires_at: z.iso.datetime().describe('The code cannot be verified after this'),
  provider: z.string().describe('Slug of the provider the code was submitted to'),
  sender_id: z
    .string()
    .nullable()
    .describe('Registered sender used; null means the provider default'),
  billing: z.object({
    source: z
      .enum(['credits', 'connected_provider'])
      .describe('credits: workspace credits pay; connected_provider: the customer-funded provider'),
    settlement_status: z
      .enum(['settled', 'pending', 'refunded', 'external'])
      .describe('settled, pending (acceptance uncertain), refunded (not sent), or external'),
    credits_charged: z.int().describe('Net service credits charged for this request'),
  }),
});

export const otpSendResponseSchema = z
  .object({
    message: z.string(),
    data: otpRequestSchema,
  })
  .meta({
    examples: [
      {
        message: 'Verification code sent.',
        data: {
          request_id: '3f6c2a8e-1b4d-4f7a-9c0e-2d5b8a1f6e3c',
          status: 'accepted',
          expires_at: '2026-11-27T09:10:00.000Z',
          provider: 'simulator',
          sender_id: null,
          billing: { source: 'credits', settlement_status: 'settled', credits_charged: 1 },
        },
      },
    ],
  });

export const otpVerifyResponseSchema = z
  .object({ message: z.string() })
  .meta({ examples: [{ message: 'The code is verified.' }] });

export const insufficientCreditsResponse = messageAnswer(
  'The workspace does not have enough credits',
  'The workspace does not have enough credits: this code needs 1. An operator adds credits with `herald credits add --workspace acme --amount <n>`.',
);

export const otpSendRefusedResponse = validationAnswer(
  'recipient',
  'The recipient field is required.',
);

/** docs/spec.md §4.4: one answer for every code that does not verify, beside the validation errors. */
export const otpVerifyRefusedResponse = z
  .union([validationErrorSchema, messageOnlySchema])
  .describe(
    'Validation error, or the one answer for an invalid, expired, exhausted, used or superseded code',
  )
  .meta({
    examples: [
      { message: ERROR_CATALOGUE.otp_verification_failed.message },
      {
        message: 'The code field must be 4 to 8 digits.',
        errors: { code: ['The code field must be 4 to 8 digits.'] },
      },
    ],
  });
