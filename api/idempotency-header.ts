import type { FastifyReply } from 'fastify';
import type { IdempotentResponse } from '../commands/requests/idempotency.js';
import { validationError } from '../domain/errors.js';

const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/** The Idempotency-Key header: up to 255 printable ASCII characters, or absent. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw validationError({
      'Idempotency-Key': [
        'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      ],
    });
  }
  return header;
}

/**
 * Sends an idempotent answer. The stored JSON text goes out as is (fastify does not re-serialise
 * strings), so a replay is byte-identical to the first answer.
 */
export function replyIdempotently(reply: FastifyReply, response: IdempotentResponse) {
  if (response.replayed) reply.header('idempotent-replayed', 'true');
  return reply
    .code(response.status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(response.body as never);
}
