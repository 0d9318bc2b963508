import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

/**
 * Kept out of the REST description: the health probe, and the MCP endpoint with its OAuth and
 * discovery routes, which their own metadata documents describe.
 */
const isUndocumented = (url: string) =>
  url === '/health' || /^\/(mcp|oauth|\.well-known)(\/|$)/.test(url);

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
      isUndocumented(document.url)
        ? { schema: { hide: true }, url: document.url }
        : jsonSchemaTransform(document),
    transformObject: jsonSchemaTransformObject,
  });
});
