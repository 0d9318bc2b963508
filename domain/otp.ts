/**
 * OTP rules (SPEC §3, §4.3, §4.4, §8) and the schemas of the send and verify bodies, with
 * Laravel-style messages. Pure: whether a service, template, provider or sender exists is
 * checked later against the database.
 */
import { z } from 'zod';
import type { FieldErrors } from './errors.js';
import { parseE164 } from './phone.js';
import {
  NOT_AN_OBJECT as BODY_NOT_AN_OBJECT,
  FORMAT_INVALID,
  given,
  ifValidSoFar,
  isOmitted as isAbsent,
  maxCharacters,
  optional,
  otherFieldsWithoutNul,
  phoneNumber,
  REQUIRED,
  reportAt,
  requiredString,
  text,
  UUID,
  whenAnObject,
} from './request-schema.js';
import { countSegments } from './segments.js';
import {
  characters,
  checkIntegerBetween,
  checkSlug,
  checkUuid,
  collector,
  type Fail,
  isJsonObject,
  isOmitted,
  label,
  mustBeString,
  NOT_AN_OBJECT,
  optionalString,
  prohibited,
  required,
  tooLong,
} from './validation.js';

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

export interface OtpSendRequest {
  recipient: string;
  serviceSlug: string | null;
  purpose: string | null;
  templateSlug: string | null;
  messageTemplate: string | null;
  codeLength: number | null;
  expiresInMinutes: number | null;
  senderId: string | null;
  /** `direct` when given: the request's routing then replaces the key's. */
  routingType: 'direct' | null;
  providerSlug: string | null;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

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

/** Whether a purpose is usable (SPEC §8): up to 100 letters, digits, `.`, `_`, `:` or `-`. */
export function isOtpPurpose(purpose: string): boolean {
  return characters(purpose) <= MAX_PURPOSE_LENGTH && PURPOSE.test(purpose);
}

export function renderOtpMessage(template: string, code: string): string {
  return template.replace(CODE_PLACEHOLDER, code);
}

export function validateOtpSend(body: unknown): Validation<OtpSendRequest> {
  if (!isJsonObject(body)) return { ok: false, errors: NOT_AN_OBJECT };
  const { errors, fail } = collector();
  const recipient = checkRecipient(body.recipient, fail);
  const serviceSlug = checkUuid('service_slug', body.service_slug, fail);

  if (!isOmitted(body.code)) fail('code', prohibited('code'));
  if (serviceSlug !== null) {
    for (const field of SERVICE_FIELDS) {
      if (!isOmitted(body[field]))
        fail(field, `The ${label(field)} field is prohibited when service slug is present.`);
    }
  } else if (!isOmitted(body.failover_route_slug)) {
    fail('failover_route_slug', prohibited('failover_route_slug'));
  }
  const usesService = serviceSlug !== null || !isOmitted(body.service_slug);

  let purpose: string | null = null;
  if (!usesService) {
    purpose = optionalString('purpose', body.purpose, fail);
    if (purpose === null && isOmitted(body.purpose)) {
      fail('purpose', 'The purpose field is required when service slug is not present.');
    } else if (purpose !== null) {
      if (characters(purpose) > MAX_PURPOSE_LENGTH)
        fail('purpose', tooLong('purpose', MAX_PURPOSE_LENGTH));
      else if (!PURPOSE.test(purpose)) fail('purpose', 'The purpose field format is invalid.');
    }
  }

  const codeLength = checkIntegerBetween(
    'code_length',
    body.code_length,
    CODE_LENGTH.min,
    CODE_LENGTH.max,
    fail,
  );
  const expiresInMinutes = checkIntegerBetween(
    'expires_in_minutes',
    body.expires_in_minutes,
    EXPIRES_IN_MINUTES.min,
    EXPIRES_IN_MINUTES.max,
    fail,
  );
  const templateSlug = checkSlug('template_slug', body.template_slug, fail);
  let messageTemplate = optionalString('message_template', body.message_template, fail);
  if (messageTemplate !== null && !isOmitted(body.template_slug)) {
    fail(
      'message_template',
      'The message template field is prohibited when template slug is present.',
    );
    messageTemplate = null;
  } else if (messageTemplate !== null) {
    const problem = otpTemplateProblem(messageTemplate, codeLength ?? CODE_LENGTH.default);
    if (problem) fail('message_template', `The message template field ${problem}.`);
  }

  const senderId = optionalString('sender_id', body.sender_id, fail);
  if (senderId?.trim() === '') fail('sender_id', 'The sender id field must have a value.');
  else if (senderId !== null && characters(senderId) > MAX_OTP_SENDER_ID_LENGTH)
    fail('sender_id', tooLong('sender_id', MAX_OTP_SENDER_ID_LENGTH));
  const routingType = optionalString('routing_type', body.routing_type, fail);
  if (routingType !== null && routingType !== 'direct') {
    fail('routing_type', 'The selected routing type is invalid. OTP supports direct routing only.');
  }
  const providerSlug = checkSlug('provider_slug', body.provider_slug, fail);

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      recipient: recipient as string,
      serviceSlug,
      purpose,
      templateSlug,
      messageTemplate,
      codeLength,
      expiresInMinutes,
      senderId,
      routingType: routingType === 'direct' ? 'direct' : null,
      providerSlug,
    },
  };
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

/** SPEC §4.4 request body: the validation and the OpenAPI description. */
export const otpVerifyRequestSchema = z
  .object(
    {
      recipient: phoneNumber(
        requiredString().refine((value) => value !== '', { error: REQUIRED }),
      ).describe('E.164 phone number the code was sent to'),
      code: requiredString()
        .regex(/^[0-9]{4,8}$/, { error: 'The :attribute field must be 4 to 8 digits.' })
        .describe('4 to 8 digits, as a string so leading zeroes are kept'),
      request_id: optional(
        text().regex(UUID, { error: 'The :attribute field must be a valid UUID.' }),
        'The request_id returned by send; exactly one of request_id and purpose',
      ),
      purpose: optional(
        purposeText(FORMAT_INVALID),
        'The purpose given at send time; exactly one of request_id and purpose',
      ),
    },
    { error: BODY_NOT_AN_OBJECT },
  )
  .superRefine((body, context) => {
    if (isAbsent(body.request_id) && isAbsent(body.purpose)) {
      reportAt(
        context,
        'request_id',
        'The :attribute field is required when purpose is not present.',
      );
    } else if (!isAbsent(body.request_id) && !isAbsent(body.purpose)) {
      reportAt(
        context,
        'request_id',
        'The :attribute field is prohibited when purpose is present.',
      );
    }
  }, whenAnObject)
  .transform(({ recipient, code, request_id, purpose }) => ({
    recipient,
    code,
    requestId: request_id?.toLowerCase() ?? null,
    purpose: purpose ?? null,
  }))
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
  } as Record<string, unknown>);

export type OtpVerifyRequest = z.output<typeof otpVerifyRequestSchema>;

function checkRecipient(value: unknown, fail: Fail): string | null {
  const key = 'recipient';
  if (isOmitted(value) || value === '') {
    fail(key, required(key));
    return null;
  }
  if (typeof value !== 'string') {
    fail(key, mustBeString(key));
    return null;
  }
  const number = parseE164(value);
  if (number === undefined) fail(key, `The ${key} field must be a valid E.164 phone number.`);
  return number ?? null;
}
