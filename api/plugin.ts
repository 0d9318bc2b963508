/**
 * The REST door (/api/v1 with its reference and OpenAPI document, and the health probes) and the
 * door providers and recipients knock on (delivery receipts and replies, opt-out links). The
 * server module composes them beside the console and MCP; app-wide HTTP rules live in server/http.
 */
import type { FastifyInstance } from 'fastify';
import { createReceiptCaches } from '../commands/messaging/receipt-caches.js';
import type { ApiDeps } from './deps.js';
import { jsonBodiesOnly } from './http-protocol.js';
import { apiKeyAuth } from './plugins/auth.js';
import { openApi } from './plugins/openapi.js';
import { restValidation } from './request-validation.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { messageRecipientRoutes } from './routes/message-recipients.js';
import { messageRoutes } from './routes/messages.js';
import { optOutRoutes } from './routes/opt-out.js';
import { otpRoutes } from './routes/otp.js';
import { providerWebhookRoutes } from './routes/provider-webhooks.js';

export async function restApi(app: FastifyInstance, { deps }: { deps: ApiDeps }) {
  // Before every route: the OpenAPI document is collected through onRoute.
  await app.register(openApi);
  await app.register(healthRoutes, { deps });
  await app.register(docsRoutes, { prefix: '/api/v1' });
  await app.register(
    async (api) => {
      await api.register(jsonBodiesOnly);
      await api.register(apiKeyAuth, { deps });
      await api.register(restValidation);
      await api.register(messageRoutes, { deps });
      await api.register(messageRecipientRoutes, { deps });
      await api.register(otpRoutes, { deps });
    },
    { prefix: '/api/v1' },
  );
}

export async function providerCallbacks(app: FastifyInstance, { deps }: { deps: ApiDeps }) {
  await app.register(providerWebhookRoutes, {
    deps: { ...deps, receipts: createReceiptCaches(deps.sql) },
  });
  await app.register(optOutRoutes, { deps });
}
