import { z } from 'zod';
import { ifValidSoFar } from '../../domain/request-schema.js';

/** For the document's own parts (api/plugins/openapi.ts); the request schemas live in domain/. */
export { jsonWithoutNulSchema, NO_NUL } from '../../domain/request-schema.js';

const KEY_REFUSED = 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.';

/** api/idempotency-header.ts: 1 to 255 printable ASCII characters, no space at either end. */
export const idempotencyKeyHeaderSchema = z.object({
  'idempotency-key': z
    .string({ error: KEY_REFUSED })
    .min(1, { error: KEY_REFUSED })
    .max(255, { error: KEY_REFUSED, ...ifValidSoFar })
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/, {
      error: KEY_REFUSED,
      ...ifValidSoFar,
    })
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

const RATE_LIMITED =
  "The API key's or the workspace's rate limit is reached: Retry-After says when to retry, RateLimit-Policy and RateLimit (IETF HTTPAPI draft) the buckets";

export const authErrorResponses = {
  401: messageOnlySchema.describe('Missing, malformed, unknown or revoked API key'),
  403: messageOnlySchema.describe('The API key lacks the required ability'),
  429: messageOnlySchema.describe(RATE_LIMITED),
};

/** A send's 503 (README "Admission"); api/plugins/openapi.ts adds its Retry-After header. */
export const sendUnavailableResponse = messageOnlySchema.describe(
  'Unless its message names a campaign (which may have been saved: look it up), nothing was saved: retry after Retry-After, a keyed send with the same Idempotency-Key. Herald is at capacity: the send could not have been saved and its start confirmed within the request deadline, so it was refused first (Retry-After: 1). Or Postgres or Temporal is unavailable, or the 4.5 s deadline passed (Retry-After: 2). A saved send is answered 202, `paused` only when Temporal could not be reached',
);

/** A send's 429: the rate limits, or a fraud guard limit (README "Fraud guard"). */
export const sendLimitedResponse = (guardLimits: string) =>
  messageOnlySchema.describe(`${RATE_LIMITED}; or ${guardLimits}, with Retry-After`);
