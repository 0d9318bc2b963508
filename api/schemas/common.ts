import { z } from 'zod';

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
