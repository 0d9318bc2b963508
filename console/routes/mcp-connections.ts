/** Developer Tools → MCP & AI: the workspace's AI client connections, revocable (docs/spec.md §5.2 item 6). */
import type { FastifyInstance } from 'fastify';
import { listMcpConnections, revokeMcpConnection } from '../../commands/team/mcp-connections.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { redirect } from '../http.js';
import { messagePage } from '../pages.js';

export async function mcpConnectionRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  app.get<{ Querystring: { done?: string } }>(
    '/developer/mcp',
    { config: { action: 'mcp_connections.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      const connections = await listMcpConnections(deps, {
        workspace: signedIn.visitor.workspaceSlug,
      });
      const revokeAny = can(signedIn.visitor, 'mcp_connections.revoke_any');
      return reply.page('mcp-connections', {
        title: 'MCP & AI',
        connections: [...connections].reverse(),
        mayRevoke: (connection: { user: string }) =>
          revokeAny || connection.user === signedIn.visitor.email,
        mcpUrl: `${deps.publicUrl}/mcp`,
        mcpEnabled: deps.env.MCP_ENABLED,
        flash:
          request.query.done === 'revoked'
            ? 'The connection was revoked. Its client must connect again.'
            : undefined,
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/developer/mcp/:id/revoke',
    { config: { action: 'mcp_connections.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      const id = Number(request.params.id);
      const connections = await listMcpConnections(deps, {
        workspace: signedIn.visitor.workspaceSlug,
      });
      const connection = connections.find(
        (candidate) => candidate.id === id && candidate.revokedAt === null,
      );
      const allowed =
        connection &&
        (can(signedIn.visitor, 'mcp_connections.revoke_any') ||
          connection.user === signedIn.visitor.email);
      if (!connection || !allowed) {
        return messagePage(reply, connection ? 403 : 404, {
          title: connection ? 'Not allowed' : 'Connection not found',
          text: connection
            ? 'You may revoke your own connections; an owner or admin may revoke anyone’s.'
            : 'This workspace has no active connection with that number.',
          links: [{ label: 'MCP & AI', href: `${signedIn.base}/developer/mcp` }],
          nav: signedIn.nav,
          csrf: signedIn.csrf,
        });
      }
      await revokeMcpConnection(deps, { id }, signedIn.actor);
      return redirect(request, reply, `${signedIn.base}/developer/mcp?done=revoked`);
    },
  );
}
