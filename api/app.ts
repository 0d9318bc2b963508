import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { mcpRoutes } from '../mcp/routes.js';
import type { ApiDeps } from './deps.js';
import { registerErrorHandling } from './error-handler.js';
import { answerUndeclaredMethods, httpProtocolOptions, jsonBodiesOnly } from './http-protocol.js';
import { guardInput } from './input-guard.js';
import { apiKeyAuth } from './plugins/auth.js';
import { openApi } from './plugins/openapi.js';
import { enforceRequestDeadline } from './request-deadline.js';
import { requestIdOf } from './request-id.js';
import { restValidation } from './request-validation.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { messageRoutes } from './routes/messages.js';
import { optOutRoutes } from './routes/opt-out.js';
import { otpRoutes } from './routes/otp.js';
import { providerWebhookRoutes } from './routes/provider-webhooks.js';
import { addSecurityHeaders } from './security-headers.js';

export function buildApp(deps: ApiDeps, options: { logger?: boolean } = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logger === false ? false : { level: deps.env.LOG_LEVEL },
    // The client's x-request-id is read, and checked, by requestIdOf.
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: 1024 * 1024,
    trustProxy: deps.env.TRUSTED_PROXIES.length > 0 ? deps.env.TRUSTED_PROXIES : false,
    ...httpProtocolOptions,
  });
  enforceRequestDeadline(app);
  answerUndeclaredMethods(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app, deps.publicUrl);
  guardInput(app);
  addSecurityHeaders(app);
  // Before every route: the OpenAPI document is collected through onRoute.
  app.register(openApi);
  app.register(healthRoutes, { deps });
  app.register(providerWebhookRoutes, { deps });
  app.register(optOutRoutes, { deps });
  app.register(docsRoutes, { prefix: '/api/v1' });
  app.register(
    async (api) => {
      await api.register(jsonBodiesOnly);
      await api.register(apiKeyAuth, { deps });
      await api.register(restValidation);
      await api.register(messageRoutes, { deps });
      await api.register(otpRoutes, { deps });
    },
    { prefix: '/api/v1' },
  );
  // Off by default (SPEC §5.3): unregistered, every MCP and OAuth path is a plain 404.
  if (deps.env.MCP_ENABLED) app.register(mcpRoutes, { deps });
  return app;
}
