/**
 * The error catalogue: stable codes, the HTTP status each maps to, and the public message.
 * Use-cases throw these; the api's error handler maps them to responses.
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
  /** SPEC §4.4: one answer for invalid, expired, exhausted, used, superseded or unknown codes. */
  otp_verification_failed: { status: 422, message: 'The code is invalid or has expired.' },
  insufficient_credits: {
    status: 402,
    message: 'The workspace does not have enough credits for this send.',
  },
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
