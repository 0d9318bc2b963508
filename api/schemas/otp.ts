import { z } from 'zod';

const optional = <T extends z.ZodType>(schema: T, description: string) =>
  schema.nullable().optional().describe(description);

const WITHOUT_SERVICE = 'Without service_slug only.';

/** SPEC §4.3 request body, for the OpenAPI document (rules are enforced by domain/otp). */
export const otpSendRequestSchema = z.object({
  recipient: z
    .string()
    .describe('E.164 phone number; the own provider accepts Australian mobile numbers'),
  service_slug: optional(
    z.uuid(),
    'UUID slug of a saved OTP service; loads its current settings. Exclusive with every field below but recipient',
  ),
  purpose: optional(
    z.string().max(100),
    'Required without service_slug: up to 100 letters, digits, ".", "_", ":" or "-"',
  ),
  template_slug: optional(
    z.string(),
    `An enabled transactional template readable by the key's user; exclusive with message_template. ${WITHOUT_SERVICE}`,
  ),
  message_template: optional(
    z.string(),
    `Exactly one {code}, no other placeholder, one SMS segment once rendered. Default "Your verification code is {code}." ${WITHOUT_SERVICE}`,
  ),
  code_length: optional(z.int().min(6).max(8), `6 to 8; default 6. ${WITHOUT_SERVICE}`),
  expires_in_minutes: optional(z.int().min(1).max(10), `1 to 10; default 5. ${WITHOUT_SERVICE}`),
  sender_id: optional(
    z.string().max(50),
    `An approved sender of this workspace and provider; omit for the provider default. ${WITHOUT_SERVICE}`,
  ),
  routing_type: optional(z.enum(['direct']), `Only direct. ${WITHOUT_SERVICE}`),
  provider_slug: optional(
    z.string(),
    `Active provider; else the key's direct provider, else the service's own provider. ${WITHOUT_SERVICE}`,
  ),
});

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

export const otpVerifyRequestSchema = z.object({
  recipient: z.string().describe('E.164 phone number the code was sent to'),
  code: z.string().describe('4 to 8 digits, as a string so leading zeroes are kept'),
  request_id: optional(z.uuid(), 'The request_id returned by send; exclusive with purpose'),
  purpose: optional(z.string(), 'The purpose given at send time; exclusive with request_id'),
});

export const otpVerifyResponseSchema = z.object({ message: z.string() });
