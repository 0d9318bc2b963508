import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';
import { E164_ADDRESS } from '../../domain/phone.js';
import { BehaviourRules, behaviourInput, type Rule } from './behaviour.js';
import { type ReceiptOptions, ReceiptScheduler } from './receipts.js';
import type { InboundFields } from './signature.js';
import { inboxView, MessageStore, type StoredMessage, statusView } from './store.js';

const e164 = z.string().regex(E164_ADDRESS, 'must be an E.164 number like "+61400000000"');

const submission = z.object({
  to: e164,
  from: z.string().min(1).nullish(),
  body: z.string().min(1),
  reference: z.string().min(1),
  callback_url: z.url({ protocol: /^https?$/ }).nullish(),
});

/** `Authorization: Bearer <credential>`, the scheme read case-insensitively (RFC 9110 §11.1). */
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/i;

/** An unencoded '+' in a query string decodes to a space: read a leading space as '+'. */
const queryNumber = z.preprocess((v) => (typeof v === 'string' ? v.replace(/^ /, '+') : v), e164);
const inboxQuery = z.object({ to: queryNumber.optional() });
/** What a message submitted without `from` was sent from, as a reply to it names it. */
export const DEFAULT_SENDER = 'Simulator';
/** A recipient's reply: `to` is the sender of the message it answers. */
const inboundInput = z.object({ from: e164, to: z.string().min(1), body: z.string().min(1) });
const lookupQuery = z.object({ reference: z.string().min(1) });

export interface SimulatorOptions {
  logger?: boolean;
  /** Inbox capacity; the oldest message is dropped past it. */
  capacity?: number;
  receipts?: Partial<ReceiptOptions>;
}

function invalid(reply: FastifyReply, error: z.ZodError | string) {
  const message =
    typeof error === 'string'
      ? error
      : error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
  return reply.code(422).send({ error: { code: 'invalid_request', message } });
}

type Decision = 'accept' | 'reject' | 'fail' | 'timeout';

function decide(rule: Rule): Decision {
  if (rule.outcome === 'reject' || rule.outcome === 'fail') return rule.outcome;
  if (rule.failure_rate > 0 && Math.random() < rule.failure_rate) return 'fail';
  return rule.outcome;
}

/** A fastify instance (not listening) that behaves like a remote SMSC. */
export function createSimulator(options: SimulatorOptions = {}): FastifyInstance {
  const app = Fastify({ logger: options.logger ?? false });
  const rules = new BehaviourRules();
  const store = new MessageStore(options.capacity);
  const receipts = new ReceiptScheduler(options.receipts);
  // Withheld answers end early when the server closes, so close() never hangs.
  const closing = new AbortController();
  // Every withheld answer listens for the close: one per in-flight request, not a leak.
  setMaxListeners(0, closing.signal);

  const wait = async (ms: number) => {
    if (ms <= 0 || closing.signal.aborted) return;
    await sleep(ms, undefined, { signal: closing.signal }).catch(() => {});
  };

  // Tolerate an empty JSON body (e.g. a DELETE sent with a JSON content type).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') done(null, undefined);
    else parseJson(request, text, done);
  });

  app.addHook('preClose', async () => {
    closing.abort();
    receipts.close();
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const status = error.statusCode ?? 500;
    // Malformed JSON, empty body, wrong content type: the request is invalid.
    if (status === 400 || status === 415) return invalid(reply, error.message);
    if (status < 500)
      return reply.code(status).send({ error: { code: 'bad_request', message: error.message } });
    return reply.code(500).send({ error: { code: 'internal', message: 'Simulator error.' } });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      error: { code: 'not_found', message: `No route for ${request.method} ${request.url}.` },
    }),
  );

  app.post('/v1/messages', async (request, reply) => {
    // Optional; when given, the message's receipts are signed with it.
    const authorization = request.headers.authorization;
    const credential = authorization === undefined ? null : BEARER.exec(authorization)?.[1];
    if (credential === undefined)
      return reply.code(401).send({
        error: { code: 'unauthorized', message: 'Authorization must be "Bearer <credential>".' },
      });
    const parsed = submission.safeParse(request.body);
    if (!parsed.success) return invalid(reply, parsed.error);
    const input = parsed.data;
    const rule = rules.resolve(input.to);
    const decision = decide(rule);

    if (decision === 'reject' || decision === 'fail') {
      await wait(rule.latency_ms);
      return decision === 'reject'
        ? reply.code(400).send({
            error: { code: 'rejected', message: `Destination ${input.to} rejected.` },
          })
        : reply.code(503).send({
            error: { code: 'unavailable', message: 'Temporarily unavailable, retry later.' },
          });
    }

    const message: StoredMessage = {
      id: `sim_${randomUUID().replaceAll('-', '')}`,
      to: input.to,
      from: input.from ?? null,
      body: input.body,
      reference: input.reference,
      received_at: new Date().toISOString(),
      callback_url: input.callback_url ?? null,
      credential,
      status: 'accepted',
      error_code: null,
      status_at: null,
    };
    store.add(message);
    receipts.schedule(message, rule.receipt);

    await wait(rule.latency_ms + (decision === 'timeout' ? rule.timeout_ms : 0));
    return reply.code(202).send({ id: message.id, status: 'accepted' });
  });

  app.get('/v1/messages', async (request, reply) => {
    const parsed = lookupQuery.safeParse(request.query);
    if (!parsed.success) return invalid(reply, parsed.error);
    return { messages: store.byReference(parsed.data.reference).map(statusView) };
  });

  app.get('/v1/inbox', async (request, reply) => {
    const parsed = inboxQuery.safeParse(request.query);
    if (!parsed.success) return invalid(reply, parsed.error);
    return { messages: store.inbox(parsed.data.to).map(inboxView) };
  });

  app.delete('/v1/inbox', async (_request, reply) => {
    store.clear();
    receipts.cancelAll();
    return reply.code(204).send();
  });

  // A recipient replies to the newest message `to` sent them: delivered to that message's callback_url.
  app.post('/v1/inbound', async (request, reply) => {
    const parsed = inboundInput.safeParse(request.body);
    if (!parsed.success) return invalid(reply, parsed.error);
    const { from, to, body } = parsed.data;
    const answered = store
      .inbox(from)
      .find((message) => (message.from ?? DEFAULT_SENDER) === to && message.callback_url !== null);
    if (!answered)
      return reply.code(404).send({
        error: {
          code: 'no_conversation',
          message: `No message with a callback_url was sent to ${from} from ${to}.`,
        },
      });
    const inbound: InboundFields = {
      type: 'inbound',
      id: `sim_in_${randomUUID().replaceAll('-', '')}`,
      reference: answered.reference,
      from,
      to,
      body,
      at: new Date().toISOString(),
    };
    receipts.deliverInbound(answered, inbound);
    return reply
      .code(202)
      .send({ id: inbound.id, status: 'accepted', reference: inbound.reference });
  });

  app.get('/v1/behaviour', async () => ({ rules: rules.list() }));

  app.post('/v1/behaviour', async (request, reply) => {
    const parsed = behaviourInput.safeParse(request.body ?? {});
    if (!parsed.success) return invalid(reply, parsed.error);
    return rules.set(parsed.data);
  });

  app.delete('/v1/behaviour', async () => {
    rules.reset();
    return { rules: rules.list() };
  });

  return app;
}

export interface RunningSimulator {
  url: string;
  close(): Promise<void>;
}

/** Starts a simulator listening on `host:port` (port 0 picks a free port). */
export async function startSimulator(options: {
  port: number;
  host?: string;
  logger?: boolean;
}): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const app = createSimulator({ logger: options.logger ?? false });
  await app.listen({ port: options.port, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const hostname = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostname}:${port}`,
    close: async () => {
      await app.close();
    },
  };
}
