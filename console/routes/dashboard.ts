/** The dashboard: credit balance, 7- and 30-day delivery summaries, daily stacked bars, recent batches. */
import type { FastifyInstance } from 'fastify';
import { listLatestBatches, loadDashboard } from '../../commands/console/dashboard.js';
import { loadOtpSummary } from '../../commands/otp/activity.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { DAILY_PARTS, dailyBars } from '../daily-bars.js';

export async function dashboardRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  app.get('/', { config: { action: 'dashboard.view' } }, async (request, reply) => {
    const { visitor } = request.member;
    const dashboard = await loadDashboard(deps, visitor.workspaceId);
    return reply.page('dashboard', {
      title: 'Dashboard',
      dashboard,
      daily: dailyBars(dashboard.chart),
      dailyParts: DAILY_PARTS,
      canSend: can(visitor, 'quick_send.send'),
      canOpenBatches: can(visitor, 'batches.view'),
      otp: {
        totals: await loadOtpSummary(deps, visitor.workspaceId),
        canOpen: can(visitor, 'otp_services.view'),
      },
    });
  });

  // The recent batches table alone, polled by the dashboard while a batch's figures may move.
  app.get('/recent-batches', { config: { action: 'dashboard.view' } }, async (request, reply) => {
    const { visitor } = request.member;
    const recent = await listLatestBatches(deps, visitor.workspaceId, 10);
    return reply.page('recent-batches', {
      title: 'Recent batches',
      recent,
      canOpenBatches: can(visitor, 'batches.view'),
    });
  });
}
