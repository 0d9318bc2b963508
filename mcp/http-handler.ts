import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';

export interface McpHttpHandler<Scope> {
  /**
   * Answers one MCP POST, of either protocol era, with a JSON body; `scope` (who the guard let
   * in) reaches the server factory through the SDK's `authInfo`.
   */
  answer(request: Request, body: unknown, authInfo: AuthInfo, scope: Scope): Promise<Response>;
  close(): Promise<void>;
}

const SCOPE = 'herald.scope';

/**
 * Both protocol eras from one stateless, per-request handler, so any api replica answers any
 * request. The 2.x SDK's `createMcpHandler` serves 2026-07-28 (`server/discover`, the `_meta`
 * envelope, `Mcp-Method`/`Mcp-Name` checked against the body, `resultType`, cache hints). A
 * 2025-era request (`initialize`, then plain requests) is routed here to a stateless Streamable
 * HTTP transport answering JSON, as Herald always has: the SDK's own legacy fallback would
 * answer over SSE, which no client needs for a read-only tool call.
 */
export function createMcpHttpHandler<Scope>(
  serverFor: (scope: Scope) => McpServer,
  log: FastifyBaseLogger,
): McpHttpHandler<Scope> {
  const onerror = (error: Error) => log.debug({ reason: error.message }, 'MCP request refused');
  const scopeOf = (authInfo: AuthInfo | undefined) => authInfo?.extra?.[SCOPE] as Scope;
  const modern = createMcpHandler(({ authInfo }) => serverFor(scopeOf(authInfo)), {
    legacy: 'reject',
    onerror,
  });

  async function answerLegacy(request: Request, body: unknown, authInfo: AuthInfo) {
    const server = serverFor(scopeOf(authInfo));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    transport.onerror = onerror;
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: body, authInfo });
    } finally {
      await server.close();
    }
  }

  return {
    async answer(request, body, authInfo, scope) {
      const scoped = { ...authInfo, extra: { ...authInfo.extra, [SCOPE]: scope } };
      return (await isLegacyRequest(request, body))
        ? answerLegacy(request, body, scoped)
        : modern.fetch(request, { parsedBody: body, authInfo: scoped });
    },
    close: () => modern.close(),
  };
}
