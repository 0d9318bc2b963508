import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Admission } from '../commands/requests/admission.js';
import {
  type AnswerDeadline,
  type DeadlineAnswer,
  DeadlinePassedError,
} from '../commands/requests/answer-deadline.js';
import { ERROR_CATALOGUE, OUTAGE_RETRY_AFTER_S } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's admission (commands/requests/admission.ts): a slot is taken before anything else of the
     * request runs, signing in included, and held until its answer is written.
     */
    admission?: Admission;
  }
}

/**
 * A request still running after this is answered, so that every answer comes within 5 s even
 * when a dependency hangs. While the request has saved nothing, the answer is 503 with
 * Retry-After, and a send's save can no longer commit after it (commands/requests/answer-deadline.ts);
 * once a save's commit has begun, the answer is the one the send left for the deadline.
 */
export const REQUEST_DEADLINE_MS = 4_500;

/**
 * Time kept after `answerBy` for the answer to be stored (a few database calls) and written. A
 * Temporal call stops waiting at its deadline (temporal/deadline.ts), and a send hands the
 * deadline its answer as soon as it is known (commands/requests/answer-deadline.ts), so should storing it
 * outlast the deadline the deadline answers the same. A third of a shorter deadline (tests'), so
 * that `answerBy` never comes before the request.
 */
const ANSWER_MARGIN_MS = 750;
const answerMargin = (deadlineMs: number) => Math.min(ANSWER_MARGIN_MS, deadlineMs / 3);

const UNAVAILABLE: DeadlineAnswer = {
  status: 503,
  body: JSON.stringify({ message: ERROR_CATALOGUE.service_unavailable.message }),
};

/** One request's deadline: when it falls, and what it answers then. */
class RequestDeadline implements AnswerDeadline {
  readonly answerBy: number;
  /** Set once the deadline has written its answer. */
  private answered = false;
  private answer = UNAVAILABLE;

  constructor(
    deadlineMs: number,
    private readonly write: (answer: DeadlineAnswer) => void,
  ) {
    this.answerBy = Date.now() + deadlineMs - answerMargin(deadlineMs);
  }

  /** The deadline has come: write the answer that is true now, unless the reply is under way. */
  fall(replyUnderWay: boolean) {
    if (replyUnderWay || this.answered) return;
    this.answered = true;
    this.write(this.answer);
  }

  saving(uncertain: DeadlineAnswer) {
    if (this.answered) throw new DeadlinePassedError();
    this.answer = uncertain;
  }

  saved(answer: DeadlineAnswer) {
    this.answer = answer;
  }

  notSaved() {
    this.answer = UNAVAILABLE;
  }
}

/** Replies whose answer is being written (onSend reached): the deadline leaves those alone. */
const answering = new WeakSet<FastifyReply>();
const deadlines = new WeakMap<FastifyRequest, RequestDeadline>();

/** This request's deadline, for a send to leave its answers with (commands/requests/answer-deadline.ts). */
export function deadlineOf(request: FastifyRequest): AnswerDeadline {
  const deadline = deadlines.get(request);
  if (!deadline) throw new Error('enforceRequestDeadline is not registered');
  return deadline;
}

/**
 * Not Fastify's own `handlerTimeout`: in Fastify 5.12 it is cleared when a request's body has
 * been read (the request's 'close' is taken for the client going away), so it never fires for a
 * POST. This answers from a timer started with the request, with the response written in one go:
 * the reply is `sent` at once, and Fastify then drops (and logs) whatever the handler sends or
 * returns later. Registered first, so that it covers every route and hook.
 */
export function enforceRequestDeadline(app: FastifyInstance, deadlineMs = REQUEST_DEADLINE_MS) {
  app.addHook('onRequest', (request, reply, done) => {
    const deadline = new RequestDeadline(deadlineMs, ({ status, body }) => {
      request.log.warn({ deadlineMs, status }, 'request deadline passed');
      reply.raw.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        ...(status === 503 ? { 'retry-after': String(OUTAGE_RETRY_AFTER_S) } : {}),
        'x-request-id': request.id,
      });
      reply.raw.end(body);
    });
    deadlines.set(request, deadline);
    // Answered, being answered, or hijacked (the MCP transport writes its own response).
    const timer = setTimeout(
      () => deadline.fall(reply.sent || answering.has(reply) || reply.raw.headersSent),
      deadlineMs,
    );
    reply.raw.once('close', () => clearTimeout(timer));
    const admission = request.routeOptions.config?.admission;
    if (!admission) return done();
    // Refused here (503, Retry-After), before the body is read: a refusal costs next to nothing.
    admission.enter(deadline.answerBy).then((leave) => {
      reply.raw.once('close', leave);
      done();
    }, done);
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    answering.add(reply);
    done(null, payload);
  });
}
