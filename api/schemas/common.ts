import { z } from 'zod';

/*
 * The request rules the handlers enforce (domain/send-request.ts, domain/otp.ts, api/services),
 * written as JSON Schema so that the OpenAPI document refuses what the server refuses. Digits are
 * [0-9], not \d, which in other regex dialects (Python's) takes any Unicode digit.
 */

/** What JavaScript's String.prototype.trim removes: a field of only these is blank. */
export const JS_WHITESPACE =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** NUL (U+0000), which the api refuses anywhere in a request (api/input-guard.ts). */
export const NUL = '\\u0000';
/** Any text without NUL. */
export const NO_NUL = new RegExp(`^[^${NUL}]*$`);
/** Text without NUL with at least one character that is not whitespace. */
export const NOT_BLANK = new RegExp(`^[^${NUL}]*[^${NUL}${JS_WHITESPACE}][^${NUL}]*$`);
/** Strict E.164 as domain/phone.ts reads it; whether the number exists in its plan is checked too. */
export const E164 = /^\+[1-9][0-9]{7,14}$/;
export const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Any JSON without NUL in a string or a key: what the api takes in the fields it does not read,
 * which it ignores (nesting over 32 levels is refused too, api/input-guard.ts). Recursive, so a
 * component of the document (api/plugins/openapi.ts), referred to by JSON_WITHOUT_NUL.
 */
export const JSON_WITHOUT_NUL = '#/components/schemas/JsonWithoutNul';
export const jsonWithoutNulSchema = {
  description: 'Any JSON value with no NUL (U+0000) in its strings or keys',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: NO_NUL.source },
    { type: 'array', items: { $ref: JSON_WITHOUT_NUL } },
    {
      type: 'object',
      propertyNames: { pattern: NO_NUL.source },
      additionalProperties: { $ref: JSON_WITHOUT_NUL },
    },
  ],
};

/** A request body's fields besides those declared: ignored, but not allowed to carry NUL. */
export const otherFieldsWithoutNul = {
  propertyNames: { pattern: NO_NUL.source },
  additionalProperties: { $ref: JSON_WITHOUT_NUL },
};

/** JSON Schema: `field` is present with a value matching `schema` (null counts as omitted). */
export const given = (field: string, schema: object) => ({
  required: [field],
  properties: { [field]: schema },
});

/** JSON Schema's if/then/else, for the rules between fields. */
export function when(condition: object, consequence: object, otherwise?: object) {
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, never awaited.
  return { if: condition, then: consequence, ...(otherwise ? { else: otherwise } : {}) };
}

/** api/idempotency-header.ts: 1 to 255 printable ASCII characters, no space at either end. */
export const idempotencyKeyHeaderSchema = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/)
    .optional()
    .describe(
      'Up to 255 printable ASCII characters, no space first or last. Retries of one request carry the same key; the key is kept for IDEMPOTENCY_KEY_TTL_HOURS',
    ),
});

/** SPEC §2.4 error objects, shared by every route's response schemas. */
export const messageOnlySchema = z
  .object({ message: z.string().describe('Human-readable explanation') })
  .describe('Error with a message only (401, 403, 409, OTP verification failure)');

export const validationErrorSchema = z
  .object({
    message: z.string().describe('The first error, plus "(and N more errors)"'),
    errors: z
      .record(z.string(), z.array(z.string()))
      .describe('Field name (dot path for array items, e.g. recipients.3) to messages'),
  })
  .describe('Validation error (422)');

export const notFoundSchema = z
  .object({
    title: z.string(),
    detail: z.string(),
    instance: z.string().describe('URL of the request'),
    code: z.literal('NOT-404'),
    link: z.string().describe('Documentation link; may be empty'),
  })
  .describe('Not found (404)');

export const authErrorResponses = {
  401: messageOnlySchema.describe('Missing, malformed, unknown or revoked API key'),
  403: messageOnlySchema.describe('The API key lacks the required ability'),
};
