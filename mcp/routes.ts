import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { CommandDeps } from '../commands/deps.js';
import { createDeliverySummaryCache } from './delivery-summary-cache.js';
import { guardMcpRequest } from './guard.js';
import type { OAuthDeps } from './oauth/deps.js';
import {
  authorizationServerMetadata,
  oauthUrls,
  protectedResourceMetadata,
} from './oauth/metadata.js';
import { authorizationServerRoutes } from './oauth/routes.js';
import { createMcpServer } from './server.js';

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

  app.post('/mcp', async (request, reply) => {
    const guard = await guardMcpRequest(oauth, request.headers.authorization);
    if (!guard.ok) {
      return reply
        .code(guard.status)
        .header('www-authenticate', guard.wwwAuthenticate)
        .send(guard.body);
    }
    const caller = { workspaceId: guard.grant.workspaceId, userId: guard.grant.userId };
    const server = createMcpServer(
      { sql: deps.sql, caller, now: () => new Date(), deliverySummaries },
      request.log,
    );
    // Stateless: every request stands alone, so any api replica can answer it.
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    reply.hijack();
    reply.raw.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
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
