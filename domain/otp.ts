/**
 * OTP rules (docs/spec.md §3, §4.3, §4.4, §8) and the schemas of the send and verify bodies, with
 * Laravel-style messages. Pure: whether a service, template, provider or sender exists is
 * checked later against the database.
 */
import { z } from 'zod';
import {
  NOT_AN_OBJECT as BODY_NOT_AN_OBJECT,
  disregard,
  FORMAT_INVALID,
  fitsCharacters,
  given,
  ifValidSoFar,
  isOmitted,
  JS_WHITESPACE,
  MUST_BE_STRING,
  maxCharacters,
  NOT_BLANK,
  NUL,
  optional,
  otherFieldsWithoutNul,
  PROHIBITED,
  phoneNumber,
  REQUIRED,
  reportAt,
  requiredString,
  SLUG,
  text,
  UUID,
  when,
  whenAnObject,
} from './request-schema.js';
import { countSegments } from './segments.js';

export const CODE_PLACEHOLDER = '{code}';
export const DEFAULT_OTP_TEMPLATE = `Your verification code is ${CODE_PLACEHOLDER}.`;
export const CODE_LENGTH = { min: 6, max: 8, default: 6 } as const;
export const EXPIRES_IN_MINUTES = { min: 1, max: 10, default: 5 } as const;
export const MAX_PURPOSE_LENGTH = 100;
export const MAX_OTP_SENDER_ID_LENGTH = 50;
/** Five failed verifications within 15 minutes lock a user, recipient and purpose out. */
export const MAX_FAILED_VERIFICATIONS = 5;
export const FAILED_VERIFICATION_WINDOW_MINUTES = 15;

const MAX_SINGLE_SEGMENT_CHARACTERS = 160;
const ONE_SEGMENT = 'must fit in one SMS segment with the code';
const PURPOSE = /^[A-Za-z0-9._:-]+$/;
/** Any `{word}` placeholder; only `{code}` is allowed in an OTP message. */
const PLACEHOLDER = /\{[^{}\s]*\}/g;

/** Fields a saved OTP service supplies; a request naming a service may not give them. */
const SERVICE_FIELDS = [
  'purpose',
  'code_length',
  'expires_in_minutes',
  'template_slug',
  'message_template',
  'provider_slug',
  'sender_id',
  'routing_type',
  'failover_route_slug',
] as const;

/** Why an OTP message text is unusable, or null when it is fine. */
export function otpTemplateProblem(template: string, codeLength: number): string | null {
  // No single segment holds more than 160 characters, and the code is never shorter than its
  // placeholder: a longer template cannot fit, and is refused before anything reads it.
  if (template.length > MAX_SINGLE_SEGMENT_CHARACTERS) return ONE_SEGMENT;
  const placeholders = template.match(PLACEHOLDER) ?? [];
  const codes = placeholders.filter((placeholder) => placeholder === CODE_PLACEHOLDER).length;
  if (codes !== 1) return `must contain ${CODE_PLACEHOLDER} exactly once`;
  if (placeholders.length > 1) return `may not contain placeholders other than ${CODE_PLACEHOLDER}`;
  const rendered = renderOtpMessage(template, '0'.repeat(codeLength));
  if (countSegments(rendered).segments > 1) return ONE_SEGMENT;
  return null;
}

/** Whether a purpose is usable (docs/spec.md §8): up to 100 letters, digits, `.`, `_`, `:` or `-`. */
export function isOtpPurpose(purpose: string): boolean {
  return fitsCharacters(purpose, MAX_PURPOSE_LENGTH) && PURPOSE.test(purpose);
}

/**
 * The provider outcome of an OTP request's submission, as its workflow answers the send request
 * that waits on it; `pending` while acceptance is uncertain.
 */
export interface OtpSubmission {
  status: 'pending' | 'accepted' | 'failed';
}

export function renderOtpMessage(template: string, code: string): string {
  return template.replace(CODE_PLACEHOLDER, code);
}

/** A purpose: up to 100 letters, digits, `.`, `_`, `:` or `-`; `overLong` past 100. */
const purposeText = (overLong: string) =>
  maxCharacters(
    MAX_PURPOSE_LENGTH,
    overLong,
  )(text().min(1, { error: FORMAT_INVALID })).regex(PURPOSE, {
    error: FORMAT_INVALID,
    ...ifValidSoFar,
  });

/** The one phone number of an OTP; an empty string counts as missing. */
const recipientNumber = (description: string) =>
  phoneNumber(requiredString().refine((value) => value !== '', { error: REQUIRED })).describe(
    description,
  );

const integerBetween = ({ min, max }: { min: number; max: number }, description: string) => {
  const between = `The :attribute field must be between ${min} and ${max}.`;
  const integer = 'The :attribute field must be an integer.';
  // Not z.int(): its refusal of 6.5 stops the rules between fields too (an explicit abort).
  return optional(
    z
      .number({ error: integer })
      .refine(Number.isInteger, { error: integer })
      .min(min, { error: between, ...ifValidSoFar })
      .max(max, { error: between, ...ifValidSoFar })
      .meta({ type: 'integer' }),
    description,
  );
};

const WITHOUT_SERVICE = 'Without service_slug only.';

/** A placeholder is `{`, then no brace or whitespace, then `}` (PLACEHOLDER above). */
const PLACEHOLDER_BODY = `[^{}${NUL}${JS_WHITESPACE}]*`;
/** Text with no placeholder: every `{` is followed by whitespace, another `{`, or the end. */
const NO_PLACEHOLDER = `(?:[^{${NUL}]|(?:\\{${PLACEHOLDER_BODY})+[${JS_WHITESPACE}])*(?:\\{${PLACEHOLDER_BODY})*`;
/**
 * Exactly one {code} and no other placeholder: the document's rendering of otpTemplateProblem's
 * placeholder rules (test/integration/openapi.test.ts holds the two together).
 */
const OTP_TEMPLATE = new RegExp(`^${NO_PLACEHOLDER}\\{code\\}${NO_PLACEHOLDER}$`);
const ONE_SEGMENT_MESSAGE = `The :attribute field ${ONE_SEGMENT}.`;

/**
 * docs/spec.md §4.3 request body: the validation and the OpenAPI description. What the workspace's
 * services, templates, providers and senders allow, and whether the own provider takes the
 * number, need the database: commands/otp/settings.ts checks them.
 */
export const otpSendRequestSchema = z
  .object(
    {
      recipient: recipientNumber(
        'E.164 phone number valid in its plan; the own provider takes Australian mobile numbers',
      ),
      service_slug: optional(
        text().regex(UUID, { error: 'The :attribute field must be a valid UUID.' }),
        'UUID slug of a saved OTP service; loads its current settings. Exclusive with every field below but recipient',
      ),
      code: z
        .null({ error: PROHIBITED })
        .optional()
        .describe('Not accepted: Herald makes the code'),
      // Refused with or without a service, in words that depend on which: a rule between fields.
      failover_route_slug: z
        .unknown()
        .optional()
        .meta({ type: 'null' })
        .describe('Not accepted: OTP routing is direct only'),
      purpose: optional(
        purposeText(
          `The :attribute field must not be greater than ${MAX_PURPOSE_LENGTH} characters.`,
        ),
        `Required without service_slug: up to ${MAX_PURPOSE_LENGTH} letters, digits, ".", "_", ":" or "-"`,
      ),
      code_length: integerBetween(
        CODE_LENGTH,
        `${CODE_LENGTH.min} to ${CODE_LENGTH.max}; default ${CODE_LENGTH.default}. ${WITHOUT_SERVICE}`,
      ),
      expires_in_minutes: integerBetween(
        EXPIRES_IN_MINUTES,
        `${EXPIRES_IN_MINUTES.min} to ${EXPIRES_IN_MINUTES.max}; default ${EXPIRES_IN_MINUTES.default}. ${WITHOUT_SERVICE}`,
      ),
      template_slug: optional(
        text().regex(SLUG, { error: FORMAT_INVALID }),
        `An enabled transactional template readable by the key's user; exclusive with message_template. ${WITHOUT_SERVICE}`,
      ),
      // Past one segment's 160 characters it cannot fit, whatever it holds: refused before the
      // placeholder and segment rules (below, with code_length) read it.
      message_template: optional(
        text()
          .max(MAX_SINGLE_SEGMENT_CHARACTERS, { error: ONE_SEGMENT_MESSAGE })
          .meta({ pattern: OTP_TEMPLATE.source }),
        `Exactly one ${CODE_PLACEHOLDER}, no other {placeholder}, one SMS segment once rendered. Default "${DEFAULT_OTP_TEMPLATE}" ${WITHOUT_SERVICE}`,
      ),
      sender_id: optional(
        maxCharacters(MAX_OTP_SENDER_ID_LENGTH)(
          text().regex(NOT_BLANK, { error: 'The :attribute field must have a value.' }),
        ),
        `Up to ${MAX_OTP_SENDER_ID_LENGTH} characters, not blank: an approved sender of this workspace and provider; omit for the provider default. ${WITHOUT_SERVICE}`,
      ),
      routing_type: optional(
        z.enum(['direct'], {
          error: (issue) =>
            typeof issue.input === 'string'
              ? 'The selected :attribute is invalid. OTP supports direct routing only.'
              : MUST_BE_STRING,
        }),
        `Only direct. ${WITHOUT_SERVICE}`,
      ),
      provider_slug: optional(
        text().regex(SLUG, { error: FORMAT_INVALID }),
        `Active provider; else the key's direct provider, else the own provider. ${WITHOUT_SERVICE}`,
      ),
    },
    { error: BODY_NOT_AN_OBJECT },
  )
  .superRefine((body, context) => {
    const serviceGiven = !isOmitted(body.service_slug);
    const usesService = typeof body.service_slug === 'string' && UUID.test(body.service_slug);
    if (usesService) {
      for (const field of SERVICE_FIELDS) {
        if (!isOmitted(body[field]))
          reportAt(
            context,
            field,
            'The :attribute field is prohibited when service slug is present.',
            // The old rule: a service's purpose is not read; other settings are checked too.
            field === 'purpose' ? 'only' : 'first',
          );
      }
    } else if (!isOmitted(body.failover_route_slug)) {
      reportAt(context, 'failover_route_slug', PROHIBITED);
    }
    // A service_slug, even one refused, stands in for the purpose, which is not read then.
    if (serviceGiven && !usesService) disregard(context, 'purpose');
    if (!serviceGiven && isOmitted(body.purpose)) {
      reportAt(
        context,
        'purpose',
        'The :attribute field is required when service slug is not present.',
      );
    }
    const template = body.message_template;
    if (typeof template !== 'string') return;
    if (!isOmitted(body.template_slug)) {
      reportAt(
        context,
        'message_template',
        'The :attribute field is prohibited when template slug is present.',
        'only',
      );
    } else if (template.length <= MAX_SINGLE_SEGMENT_CHARACTERS) {
      const { min, max } = CODE_LENGTH;
      const length = body.code_length;
      const codeLength =
        Number.isInteger(length) && (length as number) >= min && (length as number) <= max
          ? (length as number)
          : CODE_LENGTH.default;
      const problem = otpTemplateProblem(template, codeLength);
      if (problem) reportAt(context, 'message_template', `The :attribute field ${problem}.`);
    }
  }, whenAnObject)
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
            SERVICE_FIELDS.filter((field) => field !== 'failover_route_slug').map((field) => [
              field,
              { type: 'null' },
            ]),
          ),
        },
        given('purpose', { type: 'string' }),
      ),
      when(given('template_slug', { type: 'string' }), {
        properties: { message_template: { type: 'null' } },
      }),
    ],
  } as Record<string, unknown>)
  .transform((body) => ({
    recipient: body.recipient,
    serviceSlug: body.service_slug?.toLowerCase() ?? null,
    purpose: body.purpose ?? null,
    templateSlug: body.template_slug ?? null,
    messageTemplate: body.message_template ?? null,
    codeLength: body.code_length ?? null,
    expiresInMinutes: body.expires_in_minutes ?? null,
    senderId: body.sender_id ?? null,
    /** `direct` when given: the request's routing then replaces the key's. */
    routingType: body.routing_type ?? null,
    providerSlug: body.provider_slug ?? null,
  }));

export type OtpSendRequest = z.output<typeof otpSendRequestSchema>;

/** docs/spec.md §4.4 request body: the validation and the OpenAPI description. */
export const otpVerifyRequestSchema = z
  .object(
    {
      recipient: recipientNumber('E.164 phone number the code was sent to'),
      code: requiredString()
        .regex(/^[0-9]{4,8}$/, { error: 'The :attribute field must be 4 to 8 digits.' })
        .describe('4 to 8 digits, as a string so leading zeroes are kept'),
      request_id: optional(
        text().regex(UUID, { error: 'The :attribute field must be a valid UUID.' }),
        'The request_id returned by send; exactly one of request_id and purpose',
      ),
      // Read only when it is the one given (below).
      purpose: optional(
        text().meta({ minLength: 1, maxLength: MAX_PURPOSE_LENGTH, pattern: PURPOSE.source }),
        'The purpose given at send time; exactly one of request_id and purpose',
      ),
    },
    { error: BODY_NOT_AN_OBJECT },
  )
  .superRefine((body, context) => {
    if (isOmitted(body.request_id) && isOmitted(body.purpose)) {
      reportAt(
        context,
        'request_id',
        'The :attribute field is required when purpose is not present.',
      );
    } else if (!isOmitted(body.request_id) && !isOmitted(body.purpose)) {
      reportAt(
        context,
        'request_id',
        'The :attribute field is prohibited when purpose is present.',
      );
    } else if (typeof body.purpose === 'string' && !isOtpPurpose(body.purpose)) {
      reportAt(context, 'purpose', FORMAT_INVALID);
    }
  }, whenAnObject)
  .meta({
    ...otherFieldsWithoutNul,
    examples: [{ recipient: '+61412345678', code: '123456', purpose: 'login' }],
    oneOf: [
      {
        ...given('request_id', { type: 'string' }),
        properties: { request_id: { type: 'string' }, purpose: { type: 'null' } },
      },
      {
        ...given('purpose', { type: 'string' }),
        properties: { purpose: { type: 'string' }, request_id: { type: 'null' } },
      },
    ],
  } as Record<string, unknown>)
  .transform(({ recipient, code, request_id, purpose }) => ({
    recipient,
    code,
    requestId: request_id?.toLowerCase() ?? null,
    purpose: purpose ?? null,
  }));

export type OtpVerifyRequest = z.output<typeof otpVerifyRequestSchema>;
