import { z } from 'zod';
import {
  CODE_LENGTH,
  CODE_PLACEHOLDER,
  DEFAULT_OTP_TEMPLATE,
  EXPIRES_IN_MINUTES,
  MAX_OTP_SENDER_ID_LENGTH,
  MAX_PURPOSE_LENGTH,
} from '../../domain/otp.js';
import {
  E164,
  given,
  JS_WHITESPACE,
  NOT_BLANK,
  NUL,
  otherFieldsWithoutNul,
  SLUG,
  UUID,
  when,
} from './common.js';

/** The fields a saved OTP service supplies: a request naming a service may not give them. */
const SERVICE_SETTINGS = [
  'purpose',
  'code_length',
  'expires_in_minutes',
  'template_slug',
  'message_template',
  'provider_slug',
  'sender_id',
  'routing_type',
] as const;

const optional = <T extends z.ZodType>(schema: T, description: string) =>
  schema.nullable().optional().describe(description);

/** A field the body may not carry: null is the same as omitted. */
const absent = (description: string) => z.null().optional().describe(description);

const WITHOUT_SERVICE = 'Without service_slug only.';

/** A placeholder is `{`, then no brace or whitespace, then `}` (domain/otp.ts). */
const PLACEHOLDER_BODY = `[^{}${NUL}${JS_WHITESPACE}]*`;
/** Text with no placeholder: every `{` is followed by whitespace, another `{`, or the end. */
const NO_PLACEHOLDER = `(?:[^{${NUL}]|(?:\\{${PLACEHOLDER_BODY})+[${JS_WHITESPACE}])*(?:\\{${PLACEHOLDER_BODY})*`;
/** Exactly one {code} and no other placeholder. */
const OTP_TEMPLATE = new RegExp(`^${NO_PLACEHOLDER}\\{code\\}${NO_PLACEHOLDER}$`);
/** One SMS segment holds 160 GSM-7 characters, and {code} becomes at least as many digits. */
const MAX_OTP_TEMPLATE_LENGTH = 160;

/**
 * SPEC §4.3 request body, for the OpenAPI document (rules are enforced by domain/otp and
 * commands/otp-settings). What a schema cannot carry: whether the number exists in its
 * plan, whether the rendered message fits one segment (GSM-7 or UCS-2), and what the
 * workspace's services, templates, providers and senders allow.
 */
export const otpSendRequestSchema = z
  .object({
    recipient: z
      .string()
      .regex(E164)
      .describe(
        'E.164 phone number valid in its plan; the own provider takes Australian mobile numbers',
      ),
    service_slug: optional(
      z.string().regex(UUID),
      'UUID slug of a saved OTP service; loads its current settings. Exclusive with every field below but recipient',
    ),
    purpose: optional(
      z
        .string()
        .min(1)
        .max(MAX_PURPOSE_LENGTH)
        .regex(/^[A-Za-z0-9._:-]+$/),
      `Required without service_slug: up to ${MAX_PURPOSE_LENGTH} letters, digits, ".", "_", ":" or "-"`,
    ),
    template_slug: optional(
      z.string().regex(SLUG),
      `An enabled transactional template readable by the key's user; exclusive with message_template. ${WITHOUT_SERVICE}`,
    ),
    message_template: optional(
      z.string().max(MAX_OTP_TEMPLATE_LENGTH).regex(OTP_TEMPLATE),
      `Exactly one ${CODE_PLACEHOLDER}, no other {placeholder}, one SMS segment once rendered. Default "${DEFAULT_OTP_TEMPLATE}" ${WITHOUT_SERVICE}`,
    ),
    code_length: optional(
      z.int().min(CODE_LENGTH.min).max(CODE_LENGTH.max),
      `${CODE_LENGTH.min} to ${CODE_LENGTH.max}; default ${CODE_LENGTH.default}. ${WITHOUT_SERVICE}`,
    ),
    expires_in_minutes: optional(
      z.int().min(EXPIRES_IN_MINUTES.min).max(EXPIRES_IN_MINUTES.max),
      `${EXPIRES_IN_MINUTES.min} to ${EXPIRES_IN_MINUTES.max}; default ${EXPIRES_IN_MINUTES.default}. ${WITHOUT_SERVICE}`,
    ),
    sender_id: optional(
      z.string().max(MAX_OTP_SENDER_ID_LENGTH).regex(NOT_BLANK),
      `Up to ${MAX_OTP_SENDER_ID_LENGTH} characters, not blank: an approved sender of this workspace and provider; omit for the provider default. ${WITHOUT_SERVICE}`,
    ),
    routing_type: optional(z.enum(['direct']), `Only direct. ${WITHOUT_SERVICE}`),
    provider_slug: optional(
      z.string().regex(SLUG),
      `Active provider; else the key's direct provider, else the own provider. ${WITHOUT_SERVICE}`,
    ),
    failover_route_slug: absent('Not accepted: OTP routing is direct only'),
    code: absent('Not accepted: Herald makes the code'),
  })
  .meta({
    ...otherFieldsWithoutNul,
    examples: [
      { recipient: '+61412345678', purpose: 'login' },
      {
        recipient: '+61412345678',
        purpose: 'login',
        code_length: 8,
        message_template: 'Code: {code}',
      },
    ],
    allOf: [
      // A service supplies every setting; without one, purpose is required.
      when(
        given('service_slug', { type: 'string' }),
        {
          properties: Object.fromEntries(
            SERVICE_SETTINGS.map((field) => [field, { type: 'null' }]),
          ),
        },
        given('purpose', { type: 'string' }),
      ),
      when(given('template_slug', { type: 'string' }), {
        properties: { message_template: { type: 'null' } },
      }),
    ],
  } as Record<string, unknown>);

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
