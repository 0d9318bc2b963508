import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { CommandDeps } from '../commands/deps.js';
import { createDeliverySummaryCache } from './delivery-summary-cache.js';
import { guardMcpRequest } from './guard.js';
import { createMcpHttpHandler } from './http-handler.js';
import type { OAuthDeps } from './oauth/deps.js';
import {
  authorizationServerMetadata,
  oauthUrls,
  protectedResourceMetadata,
} from './oauth/metadata.js';
import { authorizationServerRoutes } from './oauth/routes.js';
import { createMcpServer } from './server.js';
import type { ToolCaller } from './tools/tool.js';

/** Who a request is served for, handed through the SDK to the per-request server factory. */
interface RequestScope {
  caller: ToolCaller;
  log: FastifyBaseLogger;
}

/** The web-standard request the MCP SDK reads: method, URL and headers; the body is parsed already. */
function webRequest(request: FastifyRequest, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url, origin), { method: request.method, headers });
}

/**
 * The MCP feature: discovery documents, the authorization server (under `/oauth` and
 * `/mcp/oauth`) and the Streamable HTTP endpoint. Registered only when MCP_ENABLED.
 */
export async function mcpRoutes(app: FastifyInstance, { deps }: { deps: CommandDeps }) {
  const urls = oauthUrls(deps.publicUrl);
  const oauth: OAuthDeps = {
    sql: deps.sql,
    secret: deps.secret,
    urls,
    redirectPolicy: {
      allowDynamicClients: deps.env.MCP_ALLOW_DYNAMIC_CLIENTS,
      allowlist: deps.env.MCP_REDIRECT_URIS,
    },
  };
  const deliverySummaries = createDeliverySummaryCache(deps.env.MCP_DELIVERY_SUMMARY_CACHE_TTL);

  const resourceMetadata = protectedResourceMetadata(urls);
  app.get('/.well-known/oauth-protected-resource', async () => resourceMetadata);
  app.get('/.well-known/oauth-protected-resource/mcp', async () => resourceMetadata);
  const serverMetadata = authorizationServerMetadata(urls);
  app.get('/.well-known/oauth-authorization-server', async () => serverMetadata);

  await app.register(authorizationServerRoutes, { prefix: '/oauth', deps: oauth });
  await app.register(authorizationServerRoutes, { prefix: '/mcp/oauth', deps: oauth });

  const handler = createMcpHttpHandler<RequestScope>(
    ({ caller, log }) =>
      createMcpServer({ sql: deps.sql, caller, now: () => new Date(), deliverySummaries }, log),
    app.log,
  );
  app.addHook('onClose', () => handler.close());

  app.post('/mcp', async (request, reply) => {
    const guard = await guardMcpRequest(oauth, request.headers.authorization);
    if (!guard.ok) {
      return reply
        .code(guard.status)
        .header('www-authenticate', guard.wwwAuthenticate)
        .send(guard.body);
    }
    const { grant, token } = guard;
    const response = await handler.answer(
      webRequest(request, urls.issuer),
      request.body,
      {
        token,
        clientId: grant.clientId,
        scopes: grant.scope.split(' '),
        resource: new URL(grant.resource),
      },
      { caller: { workspaceId: grant.workspaceId, userId: grant.userId }, log: request.log },
    );
    return reply.send(response);
  });

  // No server-initiated stream and no sessions in stateless mode.
  const notAllowed = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
