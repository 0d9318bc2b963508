import { z } from 'zod';
import {
  MAX_MESSAGE_LENGTH,
  MAX_RECIPIENTS,
  MAX_REFERENCE_LENGTH,
  MAX_SENDER_ID_LENGTH,
  MESSAGE_PURPOSES,
  OPT_OUT_PLACEHOLDER,
  ROUTING_TYPES,
} from '../../domain/send-request.js';
import { E164, given, NO_NUL, NOT_BLANK, otherFieldsWithoutNul, SLUG, when } from './common.js';

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

/** Null is the same as omitted, for every optional field (Laravel's `nullable`). */
const nullable = <T extends z.ZodType>(schema: T, description: string) =>
  schema.nullable().optional().describe(description);

/** `{opt_out_url}`, escaped for a pattern. */
const PLACEHOLDER = OPT_OUT_PLACEHOLDER.replace(/[{}]/g, '\\$&');

/**
 * SPEC §4.1 request body, for the OpenAPI document (rules are enforced by domain/send-request
 * and commands/routing). What a schema cannot carry: whether a number exists in its
 * country's plan, duplicates after normalization (+610412… is +61412…), and what the
 * workspace's providers and routes allow.
 */
export const sendRequestSchema = z
  .object({
    recipients: z
      .array(z.string().regex(E164).describe('E.164 phone number: +, then 8 to 15 digits'))
      .min(1)
      .max(MAX_RECIPIENTS)
      .describe(
        `1 to ${MAX_RECIPIENTS.toLocaleString('en')} distinct phone numbers in E.164 format, valid in their country's numbering plan`,
      ),
    message: z
      .string()
      .min(1)
      .max(MAX_MESSAGE_LENGTH)
      .regex(NOT_BLANK)
      .describe(
        `1 to ${MAX_MESSAGE_LENGTH.toLocaleString('en')} characters (Unicode code points), not blank; ${OPT_OUT_PLACEHOLDER} only in a marketing message, at most once`,
      ),
    message_purpose: nullable(z.enum(MESSAGE_PURPOSES), 'Default transactional'),
    sender_id: nullable(
      z
        .string()
        .max(MAX_SENDER_ID_LENGTH)
        .regex(/^ *[A-Za-z0-9][A-Za-z0-9 ]*$/),
      `Up to ${MAX_SENDER_ID_LENGTH} letters, digits or spaces, not blank; required when the provider requires one`,
    ),
    routing_type: nullable(
      z.enum(ROUTING_TYPES),
      'direct (one provider) or failover (an enabled route); failover requires failover_route_slug',
    ),
    provider_slug: nullable(
      z.string().regex(SLUG),
      "An active provider's slug; direct routing without one uses the own provider. Not with failover",
    ),
    failover_route_slug: nullable(
      z.string().regex(SLUG),
      'An enabled failover route; requires routing_type failover',
    ),
    reference: nullable(
      z.string().max(MAX_REFERENCE_LENGTH).regex(NO_NUL),
      `Up to ${MAX_REFERENCE_LENGTH} characters; stored with the campaign`,
    ),
  })
  .meta({
    ...otherFieldsWithoutNul,
    examples: [
      { recipients: ['+61412345678', '+61412345679'], message: 'Your parcel arrives today.' },
      {
        recipients: ['+61412345678'],
        message: 'Sale ends Sunday. {opt_out_url}',
        message_purpose: 'marketing',
        reference: 'spring-sale',
      },
    ],
    allOf: [
      // A route needs routing_type failover; failover needs a route and no provider.
      when(
        given('failover_route_slug', { type: 'string' }),
        given('routing_type', { const: 'failover' }),
      ),
      when(given('routing_type', { const: 'failover' }), {
        required: ['failover_route_slug'],
        properties: { failover_route_slug: { type: 'string' }, provider_slug: { type: 'null' } },
      }),
      // The opt-out link only in a marketing message, and at most once.
      when(
        { not: given('message_purpose', { const: 'marketing' }) },
        { properties: { message: { not: { pattern: PLACEHOLDER } } } },
      ),
      { properties: { message: { not: { pattern: `${PLACEHOLDER}[\\s\\S]*${PLACEHOLDER}` } } } },
    ],
  } as Record<string, unknown>);

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
