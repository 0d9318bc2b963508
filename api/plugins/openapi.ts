import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

/** Operational routes without a zod schema, kept out of the API description. */
const UNDOCUMENTED = new Set(['/health']);

/**
 * SPEC: "The REST API is version 1.0.0 of its description". Collects routes through onRoute, so
 * it must be registered before any route; `schema.hide: true` keeps a route out.
 */
export const openApi = fp(async (app: FastifyInstance) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Herald API', version: '1.0.0' },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    transform: (document) =>
      UNDOCUMENTED.has(document.url)
        ? { schema: { hide: true }, url: document.url }
        : jsonSchemaTransform(document),
    transformObject: jsonSchemaTransformObject,
  });
});
