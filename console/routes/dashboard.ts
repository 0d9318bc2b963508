/** The dashboard: credit balance, 7- and 30-day delivery summaries, a daily chart, recent batches. */
import type { FastifyInstance } from 'fastify';
import { listLatestBatches, loadDashboard } from '../../commands/console/dashboard.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { sendHtml } from '../http.js';
import { render } from '../views.js';

export async function dashboardRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps, guard } = context;

  app.get('/', async (request, reply) => {
    const signedIn = await guard(request, reply, 'dashboard.view');
    if (!signedIn) return reply;
    const dashboard = await loadDashboard(deps, signedIn.visitor.workspaceId);
    return sendHtml(
      reply,
      200,
      render('dashboard', {
        title: 'Dashboard',
        nav: signedIn.nav,
        csrf: signedIn.csrf,
        base: signedIn.base,
        chart: true,
        dashboard,
        series: JSON.stringify(dashboard.chart),
        canSend: can(signedIn.visitor, 'quick_send.send'),
        canOpenBatches: can(signedIn.visitor, 'batches.view'),
      }),
    );
  });

  // The recent batches table alone, polled by the dashboard while a batch is still running.
  app.get('/recent-batches', async (request, reply) => {
    const signedIn = await guard(request, reply, 'dashboard.view');
    if (!signedIn) return reply;
    const recent = await listLatestBatches(deps, signedIn.visitor.workspaceId, 10);
    return sendHtml(
      reply,
      200,
      render('recent-batches', {
        title: 'Recent batches',
        base: signedIn.base,
        recent,
        canOpenBatches: can(signedIn.visitor, 'batches.view'),
      }),
    );
  });
}
