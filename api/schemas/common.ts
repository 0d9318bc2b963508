import { z } from 'zod';
import { AT_CAPACITY_MESSAGE } from '../../commands/requests/admission.js';
import { ERROR_CATALOGUE } from '../../domain/errors.js';
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

/** docs/spec.md §2.4 error objects, shared by every route's response schemas. */
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

/** An operation's 422, with an example of the fields it refuses (each in its schema's module). */
export const validationAnswer = (field: string, message: string) =>
  validationErrorSchema.meta({ examples: [{ message, errors: { [field]: [message] } }] });

export const notFoundSchema = z
  .object({
    title: z.string(),
    detail: z.string(),
    instance: z.string().describe('URL of the request'),
    code: z.literal('NOT-404'),
    link: z.string().describe('Documentation link; may be empty'),
  })
  .describe('Not found (404)')
  .meta({
    examples: [
      {
        title: 'Not Found',
        detail: 'Campaign 42 was not found.',
        instance: 'http://localhost:3000/api/v1/messages/42',
        code: 'NOT-404',
        link: '',
      },
    ],
  });

const RATE_LIMITED =
  "The API key's or the workspace's rate limit is reached: Retry-After says when to retry, RateLimit-Policy and RateLimit (IETF HTTPAPI draft) the buckets";

/** An error of messageOnlySchema's shape, described, with the message it carries. */
export const messageAnswer = (description: string, ...examples: string[]) =>
  messageOnlySchema
    .describe(description)
    .meta({ examples: examples.map((message) => ({ message })) });

export const authErrorResponses = {
  401: messageAnswer(
    'Missing, malformed, unknown or revoked API key',
    ERROR_CATALOGUE.unauthenticated.message,
  ),
  403: messageAnswer('The API key lacks the required ability', ERROR_CATALOGUE.forbidden.message),
  429: messageAnswer(
    RATE_LIMITED,
    'The rate limit of this API key is reached. Retry after 1 seconds.',
  ),
};

/** A keyed send's 409 while the first request with its key still runs (api/idempotency-header.ts). */
export const idempotencyConflictResponse = messageAnswer(
  'A request with this Idempotency-Key is still processing; retry with the same key after Retry-After',
  ERROR_CATALOGUE.idempotency_in_progress.message,
);

/** A send's 503 (docs/api.md "Admission"); api/plugins/openapi.ts adds its Retry-After header. */
export const sendUnavailableResponse = messageAnswer(
  'Unless its message names a campaign (which may have been saved: look it up), nothing was saved: retry after Retry-After, a keyed send with the same Idempotency-Key. Herald is at capacity: the send could not have been saved and its start confirmed within the request deadline, so it was refused first (Retry-After: 1). Or Postgres or Temporal is unavailable, or the 4.5 s deadline passed (Retry-After: 2). A saved send is answered 202, `paused` only when Temporal could not be reached',
  AT_CAPACITY_MESSAGE,
);

/** A send's 429: the rate limits, or a fraud guard limit (docs/fraud-guard.md). */
export const sendLimitedResponse = (guardLimits: string, example: string) =>
  messageAnswer(`${RATE_LIMITED}; or ${guardLimits}, with Retry-After`, example);
