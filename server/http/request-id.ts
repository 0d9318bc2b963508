import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A client's id is kept only if it cannot forge or break a log line: 1–128 plain characters. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's log id: the client's `x-request-id` when it has a safe format (so a caller can
 * follow its own id through Herald's logs), otherwise a fresh UUID.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}
