import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../db/client.js';
import { ERROR_CATALOGUE, HeraldError, OUTAGE_RETRY_AFTER_S } from '../../domain/errors.js';
import { UnacceptableInputError } from './input-guard.js';

/** docs/spec.md §2.4 not-found object; `instance` is the URL of the request. */
export function notFoundBody(publicUrl: string, request: FastifyRequest, detail: string) {
  return {
    title: 'Not Found',
    detail,
    instance: new URL(request.url, publicUrl).toString(),
    code: 'NOT-404',
    link: '',
  };
}

/** Fastify's errors for a JSON body it could not parse. */
const UNREADABLE_BODY = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY']);
const UNREADABLE_BODY_MESSAGE = 'The request body must be valid JSON.';

/** A dependency is away or too slow, not a bug: 503 with Retry-After, never a 500. */
function isServiceUnavailable(error: FastifyError | HeraldError): boolean {
  return (
    (error instanceof HeraldError && error.code === 'service_unavailable') ||
    isDatabaseUnavailable(error)
  );
}

/** The one mapping from errors to HTTP responses. 5xx bodies never carry internals. */
export function registerErrorHandling(app: FastifyInstance, publicUrl: string): void {
  app.setErrorHandler((caught: FastifyError | HeraldError, request, reply: FastifyReply) => {
    // The REST API answers unusable input in its documented 422 shape; elsewhere it is a 400.
    const error =
      caught instanceof UnacceptableInputError && request.routeOptions.url?.startsWith('/api/v1/')
        ? caught.toValidationError()
        : caught;
    if (isServiceUnavailable(error)) {
      request.log.warn(
        { code: (error as FastifyError).code, reason: error.message },
        'service unavailable',
      );
      const own = error instanceof HeraldError;
      return reply
        .code(503)
        .header('retry-after', String(OUTAGE_RETRY_AFTER_S))
        .headers(own ? error.headers : {})
        .send({ message: own ? error.message : ERROR_CATALOGUE.service_unavailable.message });
    }
    if (error instanceof HeraldError) {
      reply.headers(error.headers).code(error.status);
      if (error.code === 'not_found') return notFoundBody(publicUrl, request, error.message);
      return error.fieldErrors
        ? { message: error.message, errors: error.fieldErrors }
        : { message: error.message };
    }
    if (UNREADABLE_BODY.has((error as FastifyError).code)) {
      // Bad input gets the documented 422 shape, as any other invalid body does.
      return reply
        .code(422)
        .send({ message: UNREADABLE_BODY_MESSAGE, errors: { body: [UNREADABLE_BODY_MESSAGE] } });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ message: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ message: 'Server error.' });
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(notFoundBody(publicUrl, request, `No route matches ${request.method} ${request.url}.`)),
  );
}
