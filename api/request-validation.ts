import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { z } from 'zod';
import { validationError } from '../domain/errors.js';
import { fieldErrorsOf } from '../domain/request-schema.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The JSON body as received, before its schema parsed it: what the Idempotency-Key's
     * request hash covers, so a retry is compared with what was sent, unknown fields included.
     */
    receivedBody: unknown;
  }
}

/** A header as HTTP documents write it: `idempotency-key` → `Idempotency-Key`. */
const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());

/**
 * The REST API reads each part of a request by its route's zod schema, the same schema the
 * OpenAPI document is generated from, and refuses it in the Laravel-style 422 shape.
 */
export const restValidation = fp(async (app: FastifyInstance) => {
  app.decorateRequest('receivedBody', null);
  app.addHook('preValidation', async (request) => {
    request.receivedBody = request.body;
  });
  app.setValidatorCompiler<z.ZodType>(({ schema, httpPart }) => (data) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const keyOf = httpPart === 'headers' ? headerName : undefined;
    return { error: validationError(fieldErrorsOf(result.error.issues, schema, keyOf)) };
  });
});
