import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE } from '../domain/errors.js';
import { OUTAGE_RETRY_AFTER_S } from './error-handler.js';

/**
 * A request still running after this is answered 503 with Retry-After, so that every answer
 * comes within 5 s even when a dependency hangs. The work itself goes on (a send may still be
 * saved: a client retries with the same Idempotency-Key); its late result is never written.
 */
export const REQUEST_DEADLINE_MS = 4_500;

/** Replies whose answer is being written (onSend reached): the deadline leaves those alone. */
const answering = new WeakSet<FastifyReply>();
const deadlines = new WeakMap<FastifyRequest, number>();

/**
 * Time kept after `answerBy`: a Temporal call's deadline overshoots by up to about 0.6 s while
 * its connection retries, and the answer is then stored (a few database calls) and written.
 */
const ANSWER_MARGIN_MS = 1_500;

/** When (epoch ms) the request is answered 503 if nothing answered it before. */
export function requestDeadlineAt(request: FastifyRequest): number {
  return deadlines.get(request) ?? Number.POSITIVE_INFINITY;
}

/**
 * When work that can end with an answer of its own (a send `paused`, an OTP `pending`) stops
 * waiting for Temporal, so that its answer, not the deadline's 503, reaches the client.
 */
export function answerBy(request: FastifyRequest): number {
  return requestDeadlineAt(request) - ANSWER_MARGIN_MS;
}

/**
 * Not Fastify's own `handlerTimeout`: in Fastify 5.12 it is cleared when a request's body has
 * been read (the request's 'close' is taken for the client going away), so it never fires for a
 * POST. This answers from a timer started with the request, with the response written in one go:
 * the reply is `sent` at once, and Fastify then drops (and logs) whatever the handler sends or
 * returns later. Registered first, so that it covers every route and hook.
 */
export function enforceRequestDeadline(app: FastifyInstance, deadlineMs = REQUEST_DEADLINE_MS) {
  const body = JSON.stringify({ message: ERROR_CATALOGUE.service_unavailable.message });
  app.addHook('onRequest', (request, reply, done) => {
    deadlines.set(request, Date.now() + deadlineMs);
    const timer = setTimeout(() => {
      // Answered, being answered, or hijacked (the MCP transport writes its own response).
      if (reply.sent || answering.has(reply) || reply.raw.headersSent) return;
      request.log.warn({ deadlineMs }, 'request deadline passed');
      reply.raw.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'retry-after': String(OUTAGE_RETRY_AFTER_S),
        'x-request-id': request.id,
      });
      reply.raw.end(body);
    }, deadlineMs);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    answering.add(reply);
    done(null, payload);
  });
}
