import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { ERROR_CATALOGUE } from '../../domain/errors.js';
import { MAX_PARAM_LENGTH } from '../http-protocol.js';
import { jsonWithoutNulSchema, NO_NUL } from '../schemas/common.js';

/**
 * The description is of the REST API under /api/v1 only: the health probe, provider callbacks,
 * MCP with its OAuth routes (described by their own metadata) and the console's pages are not
 * part of it, whatever else the server composes beside it.
 */
const isUndocumented = (url: string) => !url.startsWith('/api/v1/');

const messageOnly: OpenAPIV3_1.SchemaObject = {
  type: 'object',
  properties: { message: { type: 'string', description: 'Human-readable explanation' } },
  required: ['message'],
  additionalProperties: false,
};

const retryAfter: OpenAPIV3_1.HeaderObject = {
  description: 'Seconds to wait before retrying',
  required: true,
  schema: { type: 'string', pattern: '^[0-9]+$' },
};

/** An answer in the `{message}` shape, with the message Herald sends (its example). */
const answer = (
  description: string,
  message: string,
  headers?: Record<string, OpenAPIV3_1.HeaderObject>,
): OpenAPIV3_1.ResponseObject => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: messageOnly, example: { message } } },
});

/** What any operation may answer before or beside its own code (api/http-protocol.ts). */
const EVERY_OPERATION: Record<string, OpenAPIV3_1.ResponseObject> = {
  414: answer(
    `The URL is too long: the request line over 16 KiB, or a path segment over ${MAX_PARAM_LENGTH} characters`,
    'The URL is too long.',
  ),
  431: answer('The request headers are over 16 KiB', 'The request headers are too large.'),
  503: answer(
    'Postgres or Temporal is unavailable, or the request ran past its 4.5 s deadline; retry after Retry-After (with the same Idempotency-Key for a send)',
    ERROR_CATALOGUE.service_unavailable.message,
    { 'Retry-After': retryAfter },
  ),
};

const WITH_A_BODY: Record<string, OpenAPIV3_1.ResponseObject> = {
  413: answer('The request body is over 1 MiB', 'Request body is too large'),
  415: answer('The request body is not application/json', 'Unsupported Media Type: text/plain'),
};

const WITH_PATH_PARAMETERS: Record<string, OpenAPIV3_1.ResponseObject> = {
  400: answer('The URL is malformed (an invalid percent-encoding)', 'The URL is not valid.'),
};

/** server/http/input-guard.ts: NUL anywhere in a request, in the REST API's validation shape. */
const NUL_REFUSED: OpenAPIV3_1.ResponseObject = {
  description: 'A NUL character (U+0000) in the path or a query parameter',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          message: { type: 'string' },
          errors: {
            type: 'object',
            additionalProperties: { type: 'array', items: { type: 'string' } },
          },
        },
        required: ['message', 'errors'],
        additionalProperties: false,
      },
      example: {
        message: 'The campaign field must not contain a NUL character.',
        errors: { campaign: ['The campaign field must not contain a NUL character.'] },
      },
    },
  },
};

const operationRef = (path: string, method: string) =>
  `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}`;

/**
 * Where an answer leads (OpenAPI links): a client, and schemathesis's stateful phase, can follow
 * a send to its lookup or its verification.
 */
const LINKS: Record<string, Record<string, Record<string, OpenAPIV3_1.LinkObject>>> = {
  'post /api/v1/messages': {
    202: {
      LookUpCampaign: {
        operationRef: operationRef('/api/v1/messages/{campaign}', 'get'),
        parameters: { campaign: '$response.body#/data/message/id' },
      },
    },
  },
  'post /api/v1/otp/send': {
    202: {
      VerifyCode: {
        operationRef: operationRef('/api/v1/otp/verify', 'post'),
        requestBody: {
          recipient: '$request.body#/recipient',
          request_id: '$response.body#/data/request_id',
          code: '000000',
        },
      },
    },
  },
};

/**
 * Adds to the generated document what every operation may answer at the HTTP level (a 422 for
 * NUL where the operation has none of its own), the Retry-After of a send's 409, what path parameters
 * may hold, and the links between operations.
 */
function withHttpAnswers(document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item?.[method];
      if (!operation) continue;
      const responses = { ...operation.responses } as Record<string, OpenAPIV3_1.ResponseObject>;
      const parameters = (operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
      const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
      for (const parameter of pathParameters) {
        parameter.schema = {
          maxLength: MAX_PARAM_LENGTH,
          pattern: NO_NUL.source,
          ...parameter.schema,
        };
      }
      const added = {
        ...EVERY_OPERATION,
        422: NUL_REFUSED,
        ...(operation.requestBody ? WITH_A_BODY : {}),
        ...(pathParameters.length > 0 ? WITH_PATH_PARAMETERS : {}),
      };
      for (const [status, response] of Object.entries(added)) responses[status] ??= response;
      // Only a send's 409 (its Idempotency-Key still held) is retried; a cancel's is final.
      const keyed = parameters.some(
        (parameter) =>
          parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key',
      );
      const conflict = responses['409'];
      if (conflict && keyed) conflict.headers = { 'Retry-After': retryAfter };
      // A route's own 503 (a send's admission) carries Retry-After as the generic one does.
      const unavailable = responses['503'];
      if (unavailable) unavailable.headers ??= { 'Retry-After': retryAfter };
      for (const [status, links] of Object.entries(LINKS[`${method} ${path}`] ?? {})) {
        const response = responses[status];
        if (response) response.links = links;
      }
      operation.responses = Object.fromEntries(
        Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
      ) as typeof operation.responses;
    }
  }
  return document;
}

/**
 * docs/spec.md §9: "The REST API is version 1.0.0 of its description". Collects routes through onRoute, so
 * it must be registered before any route; `schema.hide: true` keeps a route out.
 */
export const openApi = fp(async (app: FastifyInstance) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Herald API', version: '1.0.0' },
      components: {
        schemas: { JsonWithoutNul: jsonWithoutNulSchema as OpenAPIV3_1.SchemaObject },
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
    transformObject: (document) =>
      withHttpAnswers(jsonSchemaTransformObject(document) as OpenAPIV3_1.Document),
  });
});
