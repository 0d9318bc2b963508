/**
 * The Campaigns page's query parameters (status, source, period or dates, and the page cursor),
 * validated by one zod schema: a value the page does not offer is an inline error under its
 * filter, never a 500. Blank parameters (the form's "any") are not given.
 */
import { z } from 'zod';
import type { BatchCursor, BatchFilter } from '../commands/console/batches.js';
import { CAMPAIGN_STATUSES } from '../domain/campaign-status.js';

/** Every status a batch has: its campaign's (campaigns.status, copied by trigger). */
export const BATCH_STATUSES = CAMPAIGN_STATUSES;
/** How a batch was created (campaigns.source): the REST API, a Quick Send, or a named campaign. */
export const BATCH_SOURCES = ['api', 'quick_send', 'campaign'] as const;
const PERIODS = ['7d', '30d', 'all', 'dates'] as const;

type Period = (typeof PERIODS)[number];

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/**
 * The days a filter may name. Every batch lies between them, and Postgres stores every day they
 * span, the day after the last one included (year 0 or 10000 was a 500).
 */
export const FIRST_FILTER_DAY = '2000-01-01';
export const LAST_FILTER_DAY = '2999-12-31';

/** A `YYYY-MM-DD` that names a real day, as midnight UTC. */
function calendarDay(value: string): Date | undefined {
  const parts = DATE.exec(value);
  if (!parts) return undefined;
  const day = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value ? undefined : day;
}

const blankIsMissing = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const optionalParameter = <Schema extends z.ZodType>(schema: Schema) =>
  z.preprocess(blankIsMissing, schema.optional());

const oneOf = <const Values extends readonly [string, ...string[]]>(values: Values, what: string) =>
  optionalParameter(z.enum(values, { error: `${what} must be one of ${values.join(', ')}.` }));

const day = (what: string) =>
  optionalParameter(
    z.string({ error: `${what} must be a date (YYYY-MM-DD).` }).transform((value, context) => {
      const parsed = calendarDay(value);
      if (!parsed) {
        context.addIssue({ code: 'custom', message: `${what} must be a date (YYYY-MM-DD).` });
        return z.NEVER;
      }
      if (value < FIRST_FILTER_DAY || value > LAST_FILTER_DAY) {
        context.addIssue({
          code: 'custom',
          message: `${what} must be a day from ${FIRST_FILTER_DAY} to ${LAST_FILTER_DAY}.`,
        });
        return z.NEVER;
      }
      return parsed;
    }),
  );

const batchId = (what: string) =>
  optionalParameter(
    z
      .string({ error: `${what} must be a batch number.` })
      .regex(/^[1-9]\d{0,15}$/, { error: `${what} must be a batch number.` })
      .transform(Number)
      .refine(Number.isSafeInteger, { error: `${what} must be a batch number.` }),
  );

/** The period asked for: as given, else dates when a From or To date is, else all time. */
const periodOf = (query: {
  period?: Period | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}): Period => query.period ?? (query.from || query.to ? 'dates' : 'all');

const campaignFilterSchema = z
  .object({
    status: oneOf(BATCH_STATUSES, 'Status'),
    source: oneOf(BATCH_SOURCES, 'Source'),
    period: oneOf(PERIODS, 'Period'),
    from: day('From'),
    to: day('To'),
    older_than: batchId('The page'),
    newer_than: batchId('The page'),
  })
  .superRefine((query, context) => {
    const period = periodOf(query);
    if (period === 'dates' && !query.from && !query.to)
      context.addIssue({ code: 'custom', path: ['from'], message: 'Give a From or a To date.' });
    if (period === 'dates' && query.from && query.to && query.from > query.to)
      context.addIssue({ code: 'custom', path: ['to'], message: 'To must not be before From.' });
    if (query.older_than !== undefined && query.newer_than !== undefined)
      context.addIssue({
        code: 'custom',
        path: ['older_than'],
        message: 'A page is either older or newer, not both.',
      });
  });

/** The filter as the form shows it again: the parameters as given (blank when not). */
export type FilterForm = Record<'status' | 'source' | 'period' | 'from' | 'to', string>;

type CampaignQuery =
  | {
      ok: true;
      form: FilterForm;
      period: Period;
      filter: BatchFilter;
      cursor: BatchCursor;
    }
  | { ok: false; form: FilterForm; errors: Record<string, string> };

const given = (query: Record<string, unknown>, name: string) => {
  const value = query[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0] ?? '') : '';
};

/** The page's query string, read and checked; `now` is when 7 and 30 days count back from. */
export function readCampaignQuery(query: unknown, now: Date): CampaignQuery {
  const raw = query && typeof query === 'object' ? (query as Record<string, unknown>) : {};
  const form: FilterForm = {
    status: given(raw, 'status'),
    source: given(raw, 'source'),
    period: given(raw, 'period'),
    from: given(raw, 'from'),
    to: given(raw, 'to'),
  };
  const parsed = campaignFilterSchema.safeParse(raw);
  if (!parsed.success) {
    const errors: Record<string, string> = {};
    for (const issue of parsed.error.issues) {
      const field = String(issue.path[0] ?? 'period');
      const name = field === 'older_than' || field === 'newer_than' ? 'page' : field;
      errors[name] ??= issue.message;
    }
    return { ok: false, form, errors };
  }
  const value = parsed.data;
  const period = periodOf(value);
  const filter: BatchFilter = {
    ...(value.status && { status: value.status }),
    ...(value.source && { source: value.source }),
  };
  if (period === '7d' || period === '30d') {
    filter.createdFrom = new Date(now.getTime() - (period === '7d' ? 7 : 30) * DAY_MS);
  } else if (period === 'dates') {
    if (value.from) filter.createdFrom = value.from;
    // Through the whole of the To day.
    if (value.to) filter.createdBefore = new Date(value.to.getTime() + DAY_MS);
  }
  const cursor: BatchCursor =
    value.older_than !== undefined
      ? { olderThan: value.older_than }
      : value.newer_than !== undefined
        ? { newerThan: value.newer_than }
        : undefined;
  return { ok: true, form: { ...form, period }, period, filter, cursor };
}

/** The query string of the same filter on another page (`cursor`), or on its first page. */
export function pageHref(base: string, form: FilterForm, cursor: Record<string, number> = {}) {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) {
    if (value === '' || (name === 'period' && value === 'all')) continue;
    // Dates count only for a period of dates.
    if ((name === 'from' || name === 'to') && form.period !== 'dates') continue;
    parameters.set(name, value);
  }
  for (const [name, value] of Object.entries(cursor)) parameters.set(name, String(value));
  const search = parameters.toString();
  return `${base}/campaigns${search ? `?${search}` : ''}`;
}
