import type { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FastifyChildLoggerFactory } from 'fastify/types/logger.js';
import {
  endHttpServerSpan,
  startHttpServerSpan,
  traceIdOf,
  tracingEnabled,
  withActiveSpan,
} from '../telemetry/tracing.js';

/*
 * The api's HTTP server span per request (docs/operations.md, "Tracing"), with two fastify hooks rather than
 * @fastify/otel: that package builds on OpenTelemetry SDK 2.x, while Temporal's interceptors need
 * 1.x, and all Herald needs is one span per request, named by its route, active while the route
 * runs (so a workflow start, an MCP tool call or a receipt's recording are its children).
 * The span starts with the request's logger, so that every line the request logs, the first
 * ("incoming request") included, carries its trace_id.
 */

const spans = new WeakMap<IncomingMessage, Span>();

/** fastify's childLoggerFactory: the request's logger, with the trace id of its new span. */
export const tracedChildLogger: FastifyChildLoggerFactory = (logger, bindings, options, raw) => {
  if (!tracingEnabled()) return logger.child(bindings, options);
  const span = startHttpServerSpan(raw.method ?? 'GET', raw.headers);
  spans.set(raw, span);
  const traceId = traceIdOf(span);
  return logger.child(traceId ? { ...bindings, trace_id: traceId } : bindings, options);
};

/** Makes the request's span active for its hooks and handler, and ends it with the response. */
export function traceRequests(app: FastifyInstance): void {
  const spanOf = (request: FastifyRequest) => spans.get(request.raw);
  const activate = (request: FastifyRequest, _reply: unknown, done: () => void) => {
    const span = spanOf(request);
    if (span) withActiveSpan(span, done);
    else done();
  };
  // Again after the body is parsed: the parser's stream events run outside the first context.
  app.addHook('onRequest', activate);
  app.addHook('preValidation', activate);
  app.addHook('onResponse', async (request, reply) => {
    const span = spanOf(request);
    if (!span) return;
    spans.delete(request.raw);
    endHttpServerSpan(span, request.method, request.routeOptions.url, reply.statusCode);
  });
  app.addHook('onRequestAbort', async (request) => {
    const span = spanOf(request);
    if (!span) return;
    spans.delete(request.raw);
    endHttpServerSpan(span, request.method, request.routeOptions.url, 499);
  });
}
