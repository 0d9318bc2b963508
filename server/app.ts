import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ApiDeps } from '../api/deps.js';
import { answerUndeclaredMethods, httpProtocolOptions } from '../api/http-protocol.js';
import { providerCallbacks, restApi } from '../api/plugin.js';
import { enforceRequestDeadline } from '../api/request-deadline.js';
import { consoleRoutes } from '../console/plugin.js';
import { browserEdgePolicyOf, guardBrowserEdge } from '../mcp/browser-edge.js';
import { mcpRoutes } from '../mcp/routes.js';
import { redactSecrets } from '../security/log-redaction.js';
import {
  connectionLimitsOf,
  httpTimeoutOptions,
  limitConnections,
} from './http/connection-guard.js';
import { registerErrorHandling } from './http/error-handler.js';
import { recordHttpMetrics } from './http/http-metrics.js';
import { guardInput } from './http/input-guard.js';
import { requestIdOf } from './http/request-id.js';
import { addSecurityHeaders } from './http/security-headers.js';
import { tracedChildLogger, traceRequests } from './http-tracing.js';
import { withProviderTypes } from './provider-types.js';

/**
 * The api process's HTTP app: the REST API (api/) and the MCP server with its OAuth
 * authorization server (mcp/) side by side, under one set of protocol rules, error shapes and
 * security headers. The front ends never import each other; this module composes them.
 */

export function buildApp(
  given: Omit<ApiDeps, 'providerTypes'> & Partial<Pick<ApiDeps, 'providerTypes'>>,
  options: {
    logger?: boolean;
    requestDeadlineMs?: number;
    /** Where log lines go instead of stdout (a test reading what the api logs). */
    logStream?: { write(line: string): void };
  } = {},
): FastifyInstance {
  const deps: ApiDeps = withProviderTypes(given);
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: deps.env.LOG_LEVEL,
            // Every line, whatever wrote it: a request's URL, an error's message.
            hooks: { streamWrite: redactSecrets },
            ...(options.logStream && { stream: options.logStream }),
          },
    // The client's x-request-id is read, and checked, by requestIdOf.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // The request's span starts with its logger: every line it logs carries the trace id.
    childLoggerFactory: tracedChildLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: deps.env.TRUSTED_PROXIES.length > 0 ? deps.env.TRUSTED_PROXIES : false,
    ...httpTimeoutOptions(deps.env),
    ...httpProtocolOptions,
  });
  limitConnections(app.server, connectionLimitsOf(deps.env));
  traceRequests(app);
  if (deps.env.METRICS_PORT !== undefined) recordHttpMetrics(app);
  enforceRequestDeadline(app, options.requestDeadlineMs);
  // Before the 405s: a CORS preflight at /mcp or an OAuth endpoint is answered here.
  if (deps.env.MCP_ENABLED) guardBrowserEdge(app, browserEdgePolicyOf(deps.env, deps.publicUrl));
  answerUndeclaredMethods(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app, deps.publicUrl);
  guardInput(app);
  addSecurityHeaders(app);
  // The four doors, side by side; none imports another.
  app.register(restApi, { deps });
  app.register(providerCallbacks, { deps });
  // Off by default (docs/spec.md §5.3): unregistered, every MCP and OAuth path is a plain 404.
  if (deps.env.MCP_ENABLED) app.register(mcpRoutes, { deps });
  if (deps.env.CONSOLE_ENABLED) app.register(consoleRoutes, { deps });
  return app;
}
