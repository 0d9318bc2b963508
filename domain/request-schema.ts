/**
 * The vocabulary of request schemas: zod schemas that both validate a request body, with
 * Laravel-style messages, and describe it in the OpenAPI document. A message names its field as
 * `:attribute`; `fieldErrorsOf` fills it in with the field's dot path (`recipients.3`) and keys
 * the messages by that path. In domain/, not api/: the REST routes (api/request-validation.ts)
 * and the CLI read a body by the same schema, and the use-cases in commands/ take its z.infer
 * type. Pure (zod and domain only); no workflow imports it.
 */
import { z } from 'zod';
import type { FieldErrors } from './errors.js';
import { E164, parseE164 } from './phone.js';
import { label } from './validation.js';

export const REQUIRED = 'The :attribute field is required.';
export const MUST_BE_STRING = 'The :attribute field must be a string.';
export const FORMAT_INVALID = 'The :attribute field format is invalid.';
export const INVALID_SELECTION = 'The selected :attribute is invalid.';
export const PROHIBITED = 'The :attribute field is prohibited.';
export const NOT_AN_OBJECT = 'The request body must be a JSON object.';
const tooLong = (max: number) => `The :attribute field must not be greater than ${max} characters.`;

/*
 * Patterns written so that JSON Schema (the OpenAPI document) refuses what the server refuses.
 * Digits are [0-9], not \d, which in other regex dialects (Python's) takes any Unicode digit.
 */

/** What JavaScript's String.prototype.trim removes: a field of only these is blank. */
export const JS_WHITESPACE =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** NUL (U+0000), which the api refuses anywhere in a request (server/http/input-guard.ts). */
export const NUL = '\\u0000';
/** Any text without NUL. */
export const NO_NUL = new RegExp(`^[^${NUL}]*$`);
/** Text without NUL with at least one character that is not whitespace. */
export const NOT_BLANK = new RegExp(`^[^${NUL}]*[^${NUL}${JS_WHITESPACE}][^${NUL}]*$`);
/** A provider's, route's or template's slug. */
export const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** A workspace's slug: a DNS label (it names the workspace in URLs). */
export const WORKSPACE_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Any JSON without NUL in a string or a key: what the api takes in the fields it does not read,
 * which it ignores (nesting over 32 levels is refused too, server/http/input-guard.ts). Recursive, so a
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

/**
 * JSON Schema: `field` is present with a value matching `schema` (null counts as omitted). The
 * document's rendering of a rule between fields, which a zod refinement cannot carry itself.
 */
export const given = (field: string, schema: object) => ({
  required: [field],
  properties: { [field]: schema },
});

/** JSON Schema's if/then/else, for the rules between fields. */
export function when(condition: object, consequence: object, otherwise?: object) {
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, never awaited.
  return { if: condition, then: consequence, ...(otherwise ? { else: otherwise } : {}) };
}

export const isOmitted = (value: unknown): value is null | undefined =>
  value === undefined || value === null;

const isJsonObject = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body);

/** A type error: `required` when the value is missing or null, else `otherwise`. */
const requiredOr =
  (otherwise: string) =>
  (issue: { input?: unknown }): string =>
    isOmitted(issue.input) ? REQUIRED : otherwise;

/** A string the body must carry. */
export const requiredString = () => z.string({ error: requiredOr(MUST_BE_STRING) });

/** A string the body may carry; null is the same as omitted (Laravel's `nullable`). */
export const optional = <T extends z.ZodType>(schema: T, description: string) =>
  schema.nullable().optional().describe(description);

/** A string field that is optional, typed as a string when given. */
export const text = () => z.string({ error: MUST_BE_STRING });

/**
 * At most `max` characters as Laravel counts them (mb_strlen: code points, not UTF-16 units),
 * which JSON Schema's maxLength counts too. Decided from `length` alone unless it lies between
 * `max` and `2 * max`, so a huge value is refused without walking it.
 */
export function fitsCharacters(value: string, max: number): boolean {
  if (value.length <= max) return true;
  if (value.length > 2 * max) return false;
  let count = 0;
  for (const _ of value) if (++count > max) return false;
  return true;
}

/**
 * For a field's check that runs only while the field has no error yet: one message per field
 * where Laravel stops at the first (its `bail`). Not zod's `abort`, which would also stop the
 * rules between fields.
 */
export const ifValidSoFar = {
  when: (payload: { issues: readonly unknown[] }) => payload.issues.length === 0,
};

/** A length bound in characters, checked before the field's more expensive checks. */
export const maxCharacters =
  (max: number, message = tooLong(max)) =>
  (schema: z.ZodString) =>
    schema
      .refine((value) => fitsCharacters(value, max), { error: message, ...ifValidSoFar })
      .meta({ maxLength: max });

const NOT_E164 = 'The :attribute field must be a valid E.164 phone number.';

/**
 * A phone number in strict E.164 form that exists in its plan, read in its normalized form
 * (`+610412…` → `+61412…`). The shape is checked first, so only E.164-shaped text reaches
 * libphonenumber.
 */
export const phoneNumber = (schema: z.ZodString) =>
  schema.regex(E164, { error: NOT_E164, ...ifValidSoFar }).check((payload) => {
    if (payload.issues.length > 0) return;
    const number = parseE164(payload.value);
    if (number === undefined)
      payload.issues.push({ code: 'custom', message: NOT_E164, input: payload.value });
    else payload.value = number;
  });

/** The body is an object; a rule between its fields runs even when some field has the wrong type. */
export const whenAnObject = { when: (payload: { value: unknown }) => isJsonObject(payload.value) };

/**
 * How a rule between fields stands beside the field's own messages: `only`, the field's one
 * message (a field that may not be given at all needs no other correction); `first`, before them.
 */
type Standing = 'only' | 'first';

/** Reports a broken rule between fields at `field`. */
export function reportAt(
  context: z.RefinementCtx,
  field: string,
  message: string,
  standing?: Standing,
): void {
  context.addIssue({
    code: 'custom',
    path: [field],
    message,
    ...(standing && { params: { standing } }),
  });
}

/**
 * `field` is not read in this request (another field made it moot): its own messages are
 * dropped. Only where the field has one, so a body is never refused for this alone.
 */
export function disregard(context: z.RefinementCtx, field: string): void {
  if (context.issues.some((issue) => issue.path?.[0] === field))
    context.addIssue({ code: 'custom', path: [field], message: '', params: { disregard: true } });
}

const standingOf = (issue: z.core.$ZodIssue): Standing | 'disregard' | undefined =>
  issue.code === 'custom'
    ? issue.params?.disregard
      ? 'disregard'
      : (issue.params?.standing as Standing | undefined)
    : undefined;

/** The names of an object schema's fields, in order, through any refinement or transform. */
function fieldOrderOf(schema: z.ZodType): readonly string[] {
  const def = schema._zod.def as { type: string; in?: z.ZodType; shape?: object };
  if (def.type === 'pipe' && def.in) return fieldOrderOf(def.in);
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/**
 * The one mapping from zod issues to the Laravel-style `errors` object: keyed by dot path (the
 * body itself is `body`), messages with `:attribute` filled in, fields in the schema's order
 * (a rule between fields, checked last, reports at its field's place), each field's messages in
 * the order found unless the rule says how it stands beside them.
 */
export function fieldErrorsOf(
  issues: readonly z.core.$ZodIssue[],
  schema: z.ZodType,
  keyOf: (path: string) => string = (path) => path,
): FieldErrors {
  const order = fieldOrderOf(schema);
  const place = (issue: z.core.$ZodIssue) => {
    const index = order.indexOf(String(issue.path[0]));
    return index === -1 ? order.length : index;
  };
  const pathOf = (issue: z.core.$ZodIssue) =>
    keyOf(issue.path.length === 0 ? 'body' : issue.path.join('.'));
  const dropped = new Set(issues.filter((issue) => standingOf(issue) === 'disregard').map(pathOf));
  const alone = new Set(issues.filter((issue) => standingOf(issue) === 'only').map(pathOf));
  const rank = (issue: z.core.$ZodIssue) => (standingOf(issue) === 'first' ? 0 : 1);
  const sorted = [...issues].sort((a, b) => place(a) - place(b) || rank(a) - rank(b));
  const errors: FieldErrors = {};
  for (const issue of sorted) {
    const key = pathOf(issue);
    // `only` sets aside the field's own checks, not another rule's message.
    if (dropped.has(key) || (alone.has(key) && standingOf(issue) === undefined)) continue;
    errors[key] ??= [];
    errors[key].push(issue.message.replaceAll(':attribute', label(key)));
  }
  return errors;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/** Reads a body by its schema: the parsed value, or the errors by field. */
export function parseRequest<S extends z.ZodType>(
  schema: S,
  body: unknown,
): Validation<z.output<S>> {
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, errors: fieldErrorsOf(result.error.issues, schema) };
}
