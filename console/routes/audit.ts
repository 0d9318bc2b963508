/** The audit log of the workspace, for owners and admins. */
import type { FastifyInstance } from 'fastify';
import { listAudit } from '../../commands/audit.js';
import type { ConsoleContext } from '../context.js';
import { sendHtml } from '../http.js';
import { render } from '../views.js';

export async function auditRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps, guard } = context;

  app.get<{ Querystring: { before?: string } }>('/audit', async (request, reply) => {
    const signedIn = await guard(request, reply, 'audit.view');
    if (!signedIn) return reply;
    const before = Number(request.query.before);
    const page = await listAudit(deps, {
      workspaceId: signedIn.visitor.workspaceId,
      ...(Number.isSafeInteger(before) && before > 0 && { before }),
    });
    return sendHtml(
      reply,
      200,
      render('audit', {
        title: 'Audit log',
        nav: signedIn.nav,
        csrf: signedIn.csrf,
        base: signedIn.base,
        ...page,
      }),
    );
  });
}
