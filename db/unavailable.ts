/** Telling "Postgres is away or too slow right now" apart from every other database error. */

/**
 * Raised by the pool itself (see guarded-pool.ts): DATABASE_UNAVAILABLE without asking Postgres
 * while it is known to be unreachable, POOL_TIMEOUT when no connection became free in time.
 */
export class DatabaseUnavailableError extends Error {
  constructor(
    message = 'Postgres is unreachable; the next attempt is under way.',
    readonly code: 'DATABASE_UNAVAILABLE' | 'POOL_TIMEOUT' = 'DATABASE_UNAVAILABLE',
  ) {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Errors that say new connections to Postgres cannot be made at the moment. */
const CANNOT_CONNECT = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT', // postgres.js: no answer within connect_timeout
  '57P03', // cannot_connect_now: starting up, shutting down or recovering
  '53300', // too_many_connections
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
  'DATABASE_UNAVAILABLE',
]);

/** Errors of one statement or connection that a retry a little later may not meet. */
const TRANSIENT = new Set([
  'CONNECTION_CLOSED', // postgres.js: the connection closed under the query
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'POOL_TIMEOUT', // every connection stayed busy (or kept failing) for the whole wait
  'ECONNRESET',
  'EPIPE',
  // The session was ended: Postgres stopping or crashing (new connections then meet 57P03 or a
  // refusal), or just this session terminated (pg_terminate_backend also says 57P01).
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57014', // query_canceled: statement_timeout
  '25P03', // idle_in_transaction_session_timeout
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Walks an error, the attempts of an AggregateError and its cause. */
function someError(error: unknown, test: (code: string) => boolean, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const code = codeOf(error);
  if (code !== undefined && test(code)) return true;
  // A connection to a name with several addresses fails with an AggregateError of each attempt.
  const { errors, cause } = error as { errors?: unknown; cause?: unknown };
  if (Array.isArray(errors) && errors.some((each) => someError(each, test, depth + 1))) return true;
  return cause !== undefined && someError(cause, test, depth + 1);
}

/** True when new connections to Postgres fail right now: the pool stops queueing calls. */
export function isConnectionFailure(error: unknown): boolean {
  return someError(error, (code) => CANNOT_CONNECT.has(code) || /^08...$/.test(code));
}

/**
 * True for errors that mean "Postgres is unreachable, going away or too slow right now": the
 * caller should answer 503 or retry later, not report a bug.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someError(
    error,
    (code) => CANNOT_CONNECT.has(code) || TRANSIENT.has(code) || /^08...$/.test(code),
  );
}
