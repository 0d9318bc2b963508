/**
 * Reading an HTTP provider's answer to a create request: which failures left nothing behind, and
 * when the provider asked to be called again. Shared by the Twilio and simulator adapters.
 */
import { CONNECT_TIMEOUT } from './json-http.js';
import type { SubmitOutcome } from './types.js';

/**
 * The longest wait a `Retry-After` can ask of Herald (60 s): longer, and a campaign chunk or an OTP
 * would stall on one provider; the caller treats a wait it cannot afford as a failure that stands.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Errors raised before a byte of the request left Herald (DNS, refused or unreachable connection,
 * connect timeout): nothing can have been accepted, so the submission may be retried. Anything
 * else (a reset, a timeout after connecting) may come after the provider read the request.
 */
const NOT_SENT_CODES = new Set([
  CONNECT_TIMEOUT,
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * The code of a fetch or requestJson error that proves the request never left, else undefined.
 * An unreachable host on a connection already made (requestJson says `connected`) proves nothing.
 */
export function notSentCode(error: unknown): string | undefined {
  if ((error as { connected?: boolean }).connected) return undefined;
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code && NOT_SENT_CODES.has(code) ? code : undefined;
}

/**
 * `Retry-After` in milliseconds (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), capped at
 * MAX_RETRY_AFTER_MS; a date in the past is 0. Undefined when absent or not either form.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    // Date.parse reads many shapes; an HTTP-date always names its zone (GMT).
    if (Number.isNaN(at) || !/GMT$/i.test(value)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** A 429: nothing was accepted; retry no sooner than its `Retry-After`, when it gives one. */
export function rateLimited(
  reason: string,
  headers: { get(name: string): string | null },
): SubmitOutcome {
  const retryAfter = retryAfterMs(headers.get('retry-after'));
  return retryAfter === undefined
    ? { kind: 'failed', reason }
    : { kind: 'failed', reason, retryAfterMs: retryAfter };
}
