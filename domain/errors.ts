import { ApplicationFailure } from '@temporalio/common';

/**
 * The error catalogue: stable codes, the HTTP status each maps to, and the public message.
 * Use-cases and MCP tools throw these; the api's error handler (server/http/error-handler.ts) maps them to
 * responses, the MCP server's `toolErrorResult` (mcp/server.ts) to tool errors. Activity failures
 * are catalogued below.
 */
export const ERROR_CATALOGUE = {
  unauthenticated: { status: 401, message: 'Unauthenticated.' },
  forbidden: { status: 403, message: 'This action is unauthorized.' },
  not_found: { status: 404, message: 'Not found.' },
  validation_failed: { status: 422, message: 'The given data was invalid.' },
  /** The request is well formed but the state forbids it: a taken slug, the last owner. */
  conflict: { status: 409, message: 'The request conflicts with the current state.' },
  idempotency_in_progress: {
    status: 409,
    message:
      'A request with this Idempotency-Key is still being processed. Retry with the same key shortly.',
  },
  /** docs/spec.md §4.4: one answer for invalid, expired, exhausted, used, superseded or unknown codes. */
  otp_verification_failed: { status: 422, message: 'The code is invalid or has expired.' },
  insufficient_credits: {
    status: 402,
    message: 'The workspace does not have enough credits for this send.',
  },
  /** A fraud guard limit (commands/fraud-guard/send-checks.ts) or an API rate limit: Retry-After says when. */
  rate_limited: { status: 429, message: 'Too many requests.' },
  service_unavailable: { status: 503, message: 'Service temporarily unavailable.' },
  internal: { status: 500, message: 'Server error.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Field name → messages, Laravel style: dot paths for array items (`recipients.3`). */
export type FieldErrors = Record<string, string[]>;

export class HeraldError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fieldErrors: FieldErrors | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    options: { message?: string; fieldErrors?: FieldErrors; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERROR_CATALOGUE[code].message);
    this.name = 'HeraldError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.fieldErrors = options.fieldErrors;
    this.headers = options.headers ?? {};
  }
}

/** `message` is the first error, plus "(and N more errors)" as Laravel does. */
export function validationMessage(errors: FieldErrors): string {
  const all = Object.values(errors).flat();
  const [first = ERROR_CATALOGUE.validation_failed.message] = all;
  const more = all.length - 1;
  if (more <= 0) return first;
  return `${first} (and ${more} more ${more === 1 ? 'error' : 'errors'})`;
}

export function validationError(fieldErrors: FieldErrors): HeraldError {
  return new HeraldError('validation_failed', {
    message: validationMessage(fieldErrors),
    fieldErrors,
  });
}

/*
 * The activity failures: the `ApplicationFailure` types activities throw, each stated once as
 * retryable (Temporal tries the activity again under its retry policy: the condition passes) or
 * not (retrying cannot help, so the workflow sees the failure at once). Workflows' retry policies
 * take their `nonRetryableErrorTypes` from here, so a permanent failure stays permanent even where
 * it is thrown as a plain ApplicationFailure.
 */
export const ACTIVITY_FAILURES = {
  /** The campaign row is gone: no attempt will find it. */
  CampaignNotFound: { retryable: false },
  /** A provider could not say now whether it has a submission; ask again, never resend. */
  LookupUnanswered: { retryable: true },
  /** Another attempt holds the submission lease (docs/contracts.md, "Temporal conventions": fenced): retry once it has lapsed. */
  SubmissionLeaseLost: { retryable: true },
  /** Messages of the campaign are still queued: completion waits for their chunks' retries. */
  CampaignIncomplete: { retryable: true },
} as const satisfies Record<string, { retryable: boolean }>;

export type ActivityFailureType = keyof typeof ACTIVITY_FAILURES;

/** The types no retry policy retries. */
export const NON_RETRYABLE_ACTIVITY_FAILURES: readonly ActivityFailureType[] = (
  Object.keys(ACTIVITY_FAILURES) as ActivityFailureType[]
).filter((type) => !ACTIVITY_FAILURES[type].retryable);

/** An ApplicationFailure of a catalogued type, retryable as the catalogue says. */
export function activityFailure(type: ActivityFailureType, message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !ACTIVITY_FAILURES[type].retryable,
  });
}

/**
 * What a client is told to wait before retrying when Postgres is away or a request ran out of
 * time (api/request-deadline.ts, server/http/error-handler.ts): the database client finds Postgres back within a second of its
 * return, and an outage that outlasts this gets another 503 with the same advice.
 */
export const OUTAGE_RETRY_AFTER_S = 2;
