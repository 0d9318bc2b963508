/**
 * The send-SMS request body (docs/spec.md §4.1, §8): one zod schema that validates it, with Laravel-style
 * messages keyed by request field (dot paths for recipients), and describes it in the OpenAPI
 * document. Pure: whether a provider or route exists, or needs a sender id, needs the database
 * (commands/providers/routing.ts checks it).
 */
import { z } from 'zod';
import { SCHEDULE_MAX_AHEAD_DAYS } from './campaign-status.js';
import {
  checkPersonalization,
  personalizationField,
  personalizedTexts,
} from './personalization-schema.js';
import {
  NOT_AN_OBJECT as BODY_NOT_AN_OBJECT,
  FORMAT_INVALID,
  given,
  INVALID_SELECTION,
  ifValidSoFar,
  isOmitted,
  MUST_BE_STRING,
  maxCharacters,
  NO_NUL,
  NOT_BLANK,
  optional,
  otherFieldsWithoutNul,
  parseRequest,
  phoneNumber,
  REQUIRED,
  reportAt,
  requiredString,
  SLUG,
  text,
  type Validation,
  when,
  whenAnObject,
} from './request-schema.js';

export const MESSAGE_PURPOSES = ['transactional', 'marketing'] as const;
export type MessagePurpose = (typeof MESSAGE_PURPOSES)[number];

export const ROUTING_TYPES = ['direct', 'failover'] as const;
export type RoutingType = (typeof ROUTING_TYPES)[number];

export const MAX_RECIPIENTS = 1000;
export const MAX_MESSAGE_LENGTH = 1600;
export const MAX_SENDER_ID_LENGTH = 11;
export const MAX_REFERENCE_LENGTH = 100;
export const OPT_OUT_PLACEHOLDER = '{opt_out_url}';

const SEND_AT_FORMAT =
  'The :attribute field must be a valid ISO 8601 date and time with a time zone offset.';

/** Letters, digits and spaces, not blank (blank has its own message). */
const SENDER_ID = /^ *[A-Za-z0-9][A-Za-z0-9 ]*$/;
/** `{opt_out_url}`, escaped for a pattern. */
const PLACEHOLDER = OPT_OUT_PLACEHOLDER.replace(/[{}]/g, '\\$&');

/** One of `values`; another string is an invalid selection. */
const selection = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (issue) => (typeof issue.input === 'string' ? INVALID_SELECTION : MUST_BE_STRING),
  });

const recipient = phoneNumber(text()).describe('E.164 phone number: +, then 8 to 15 digits');

/** Compared after normalization (+610412… is +61412…): the first stands, later ones are reported. */
const distinctRecipients = z.array(recipient).superRefine(
  (numbers, context) => {
    const refused = new Set(context.issues.map((issue) => issue.path?.[0]));
    const seen = new Set<string>();
    for (const [index, number] of numbers.entries()) {
      if (refused.has(index)) continue;
      if (seen.has(number)) {
        context.addIssue({
          code: 'custom',
          path: [index],
          message: 'The :attribute field has a duplicate value.',
        });
      }
      seen.add(number);
    }
  },
  { when: (payload) => Array.isArray(payload.value) },
);

/**
 * The count is checked before any number is read: past 1,000 the only answer is the count.
 * Laravel's `required` also refuses an empty array. Piped, not transformed, so the document
 * shows this side, with the items as `recipient` describes them.
 */
const recipientList = z
  .array(z.unknown(), {
    error: (issue) =>
      isOmitted(issue.input) ? REQUIRED : 'The :attribute field must be an array.',
  })
  .min(1, { error: REQUIRED })
  .max(MAX_RECIPIENTS, {
    error: `The :attribute field must have between 1 and ${MAX_RECIPIENTS} items.`,
  })
  .meta({ items: itemsDocument() })
  .pipe(distinctRecipients)
  .describe(
    `1 to ${MAX_RECIPIENTS.toLocaleString('en')} distinct phone numbers in E.164 format, valid in their country's numbering plan`,
  );

function itemsDocument(): Record<string, unknown> {
  const { $schema: _, ...document } = z.toJSONSchema(recipient, { unrepresentable: 'any' });
  return document;
}

export const sendRequestSchema = z
  .object(
    {
      recipients: recipientList,
      message: maxCharacters(MAX_MESSAGE_LENGTH)(
        requiredString()
          // Laravel's `required` fails on a blank string too.
          .min(1, { error: REQUIRED })
          .regex(NOT_BLANK, { error: REQUIRED, ...ifValidSoFar }),
      ).describe(
        `1 to ${MAX_MESSAGE_LENGTH.toLocaleString('en')} characters (Unicode code points), not blank; ${OPT_OUT_PLACEHOLDER} only in a marketing message, at most once`,
      ),
      personalization: personalizationField,
      message_purpose: optional(selection(MESSAGE_PURPOSES), 'Default transactional'),
      sender_id: optional(
        maxCharacters(MAX_SENDER_ID_LENGTH)(
          text().refine((value) => value.trim() !== '', {
            error: 'The :attribute field must have a value.',
          }),
        )
          // Reported beside a length error; blank is reported once, as above.
          .refine((value) => value.trim() === '' || SENDER_ID.test(value), {
            error: 'The :attribute field must only contain letters, numbers, and spaces.',
          })
          .meta({ pattern: SENDER_ID.source }),
        `Up to ${MAX_SENDER_ID_LENGTH} letters, digits or spaces, not blank; required when the provider requires one`,
      ),
      routing_type: optional(
        selection(ROUTING_TYPES),
        'direct (one provider) or failover (an enabled route); failover requires failover_route_slug',
      ),
      provider_slug: optional(
        text().regex(SLUG, { error: FORMAT_INVALID }),
        "An active provider's slug; direct routing without one uses the own provider. Not with failover",
      ),
      failover_route_slug: optional(
        text().regex(SLUG, { error: FORMAT_INVALID }),
        'An enabled failover route; requires routing_type failover',
      ),
      reference: optional(
        maxCharacters(MAX_REFERENCE_LENGTH)(text()).regex(NO_NUL, {
          error: 'The :attribute field must not contain a NUL character.',
        }),
        `Up to ${MAX_REFERENCE_LENGTH} characters; stored with the campaign`,
      ),
      send_at: optional(
        text()
          .meta({ format: 'date-time', examples: ['2026-12-01T09:00:00+10:00'] })
          .pipe(
            z.iso.datetime({ offset: true, error: SEND_AT_FORMAT }).transform((at) => new Date(at)),
          ),
        `When to send: ISO 8601 with a time zone offset, 1 minute to ${SCHEDULE_MAX_AHEAD_DAYS} days ahead. The campaign is \`scheduled\` until then; message validity counts from then`,
      ),
    },
    { error: BODY_NOT_AN_OBJECT },
  )
  .superRefine((body, context) => {
    checkRouting(body, context);
    checkOptOutLink(body, context);
    checkPersonalization(body, context);
  }, whenAnObject)
  .meta({
    ...otherFieldsWithoutNul,
    // Named examples (OpenAPI media type examples): zod drops `examples` from the input schema of
    // anything that transforms, as send_at does.
    'x-examples': {
      transactional: {
        summary: 'An SMS to two recipients',
        value: {
          recipients: ['+61412345678', '+61412345679'],
          message: 'Your parcel arrives today.',
        },
      },
      marketing: {
        summary: 'Marketing, with its opt-out link',
        value: {
          recipients: ['+61412345678'],
          message: 'Sale ends Sunday. {opt_out_url}',
          message_purpose: 'marketing',
          reference: 'spring-sale',
        },
      },
      personalized: {
        summary: 'Personalized for each recipient',
        value: {
          recipients: ['+61412345678', '+61412345679'],
          message: 'Hi {{first_name}}, order {{order}} ships today.',
          personalization: {
            '+61412345678': { first_name: 'Ada', order: 'A-1001' },
            '+61412345679': { first_name: 'Grace', order: 'A-1002' },
          },
        },
      },
      scheduled: {
        summary: 'Scheduled',
        value: {
          recipients: ['+61412345678'],
          message: 'Your appointment is at 10:00 tomorrow.',
          send_at: '2026-12-01T09:00:00+10:00',
        },
      },
    },
    // The rules of checkRouting and checkOptOutLink, as JSON Schema.
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
  } as Record<string, unknown>)
  .transform((body) => ({
    /** Normalized E.164, distinct, in request order. */
    recipients: body.recipients,
    message: body.message,
    messagePurpose: body.message_purpose ?? 'transactional',
    senderId: body.sender_id ?? null,
    /** Null when no routing field was given: the API key's routing applies. */
    // A provider slug on its own means direct routing to that provider.
    routingType: body.routing_type ?? (body.provider_slug ? ('direct' as const) : null),
    providerSlug: body.provider_slug ?? null,
    failoverRouteSlug: body.failover_route_slug ?? null,
    reference: body.reference ?? null,
    /** Each recipient's text when the message is personalised; null: `message` for all. */
    personalized: personalizedTexts(body.message, body.recipients, body.personalization),
    /** Null: send now. */
    sendAt: body.send_at ?? null,
  }));

export type SendRequest = z.output<typeof sendRequestSchema>;

/** What the rules between fields see: any field may still have the wrong type. */
type Unchecked = Record<string, unknown>;

function checkRouting(body: Unchecked, context: z.RefinementCtx): void {
  const { routing_type: type, provider_slug: provider, failover_route_slug: route } = body;
  if (isOmitted(type) && !isOmitted(route)) {
    reportAt(
      context,
      'routing_type',
      'The :attribute field is required when failover route slug is present.',
    );
  }
  if (!isOmitted(provider) && type === 'failover') {
    reportAt(
      context,
      'provider_slug',
      'The :attribute field is prohibited when routing type is failover.',
      'only',
    );
  }
  if (isOmitted(route) && type === 'failover') {
    reportAt(
      context,
      'failover_route_slug',
      'The :attribute field is required when routing type is failover.',
    );
  } else if (!isOmitted(route) && type === 'direct') {
    reportAt(
      context,
      'failover_route_slug',
      'The :attribute field is prohibited when routing type is direct.',
      'only',
    );
  }
}

function checkOptOutLink(body: Unchecked, context: z.RefinementCtx): void {
  const { message, message_purpose: given } = body;
  if (typeof message !== 'string' || message.trim() === '') return;
  // An invalid message_purpose is reported there; only the count rule applies then.
  const purpose = isOmitted(given) ? 'transactional' : given;
  const placeholders = message.split(OPT_OUT_PLACEHOLDER).length - 1;
  if (placeholders > 0 && purpose === 'transactional') {
    reportAt(
      context,
      'message',
      `The :attribute field may only contain ${OPT_OUT_PLACEHOLDER} when the message purpose is marketing.`,
    );
  } else if (placeholders > 1) {
    reportAt(
      context,
      'message',
      `The :attribute field must not contain ${OPT_OUT_PLACEHOLDER} more than once.`,
    );
  }
}

/** Reads a send body by its schema: for front ends that are not fastify routes (the CLI). */
export function validateSendRequest(body: unknown): Validation<SendRequest> {
  return parseRequest(sendRequestSchema, body);
}
