import { z } from 'zod';

/** SPEC §2.3, with the billing object's fields named as documented in the README. */
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

export const otpSendResponseSchema = z.object({
  message: z.string(),
  data: otpRequestSchema,
});

export const otpVerifyResponseSchema = z.object({ message: z.string() });
