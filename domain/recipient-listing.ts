/**
 * A campaign's recipients a page at a time (GET /api/v1/messages/{campaign}/recipients,
 * `herald campaign recipients`): each recipient's status, the query that filters and pages them,
 * and the opaque cursor. The REST route and the CLI read the query by the same schema.
 */
import { z } from 'zod';
import { FORMAT_INVALID, INVALID_SELECTION, MUST_BE_STRING } from './request-schema.js';

/**
 * `sent`: submitted, no receipt that says delivered or undelivered yet (an `unknown` receipt
 * leaves it `sent`, with that receipt's code and time); `excluded`: left out at send time (opted
 * out of marketing), never sent.
 */
export const RECIPIENT_STATUSES = [
  'queued',
  'sent',
  'delivered',
  'undelivered',
  'failed',
  'canceled',
  'excluded',
] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const DEFAULT_RECIPIENT_PAGE = 100;
export const MAX_RECIPIENT_PAGE = 1000;
/** seq is a Postgres integer. */
const MAX_SEQ = 2_147_483_647;
/** The limits as JSON Schema can say them: 1 to 1000, written without leading zeros. */
const LIMIT_PATTERN = '^(?:[1-9][0-9]{0,2}|1000)$';
const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;

const NOT_AN_INTEGER = 'The :attribute field must be an integer.';
const OUT_OF_RANGE = `The :attribute field must be between 1 and ${MAX_RECIPIENT_PAGE}.`;

const toBase64Url = (text: string) =>
  btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');

/** The cursor of the page after the recipient at `seq`: base64url of the seq, opaque to callers. */
export function recipientCursor(seq: number): string {
  return toBase64Url(String(seq));
}

/** The seq a cursor of recipientCursor's stands for; undefined for anything it never issues. */
export function seqOfCursor(cursor: string): number | undefined {
  if (!CURSOR_PATTERN.test(cursor)) return undefined;
  let decoded: string;
  try {
    decoded = atob(cursor.replaceAll('-', '+').replaceAll('_', '/'));
  } catch {
    return undefined;
  }
  if (!/^[1-9][0-9]{0,9}$/.test(decoded)) return undefined;
  const seq = Number(decoded);
  // Only the one spelling it issues: base64 has several for some texts.
  return seq <= MAX_SEQ && recipientCursor(seq) === cursor ? seq : undefined;
}

/**
 * An empty parameter is refused like any other value outside the rule, so that the OpenAPI
 * document (a status enum, the limit's and cursor's patterns) says exactly what is taken; a
 * cursor of that pattern that Herald never issued is the one refusal it cannot say.
 */
export const recipientQuerySchema = z
  .object({
    status: z
      .string({ error: MUST_BE_STRING })
      .refine((value) => (RECIPIENT_STATUSES as readonly string[]).includes(value), {
        error: INVALID_SELECTION,
      })
      .optional()
      .meta({ enum: [...RECIPIENT_STATUSES] })
      .describe('Only recipients with this status'),
    cursor: z
      .string({ error: MUST_BE_STRING })
      .refine((value) => seqOfCursor(value) !== undefined, { error: FORMAT_INVALID })
      .optional()
      .meta({ pattern: CURSOR_PATTERN.source })
      .describe("An earlier page's next_cursor: the page after it"),
    limit: z
      .string({ error: NOT_AN_INTEGER })
      .superRefine((value, context) => {
        if (!/^(?:0|[1-9][0-9]*)$/.test(value))
          context.addIssue({ code: 'custom', message: NOT_AN_INTEGER });
        else if (Number(value) < 1 || Number(value) > MAX_RECIPIENT_PAGE)
          context.addIssue({ code: 'custom', message: OUT_OF_RANGE });
      })
      .optional()
      .meta({ pattern: LIMIT_PATTERN })
      .describe(
        `Recipients per page, 1 to ${MAX_RECIPIENT_PAGE} (default ${DEFAULT_RECIPIENT_PAGE})`,
      ),
  })
  .transform((query) => ({
    status: (query.status ?? null) as RecipientStatus | null,
    afterSeq: query.cursor === undefined ? 0 : (seqOfCursor(query.cursor) as number),
    limit: query.limit === undefined ? DEFAULT_RECIPIENT_PAGE : Number(query.limit),
  }));

export type RecipientQuery = z.output<typeof recipientQuerySchema>;
