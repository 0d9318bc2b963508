/** Batches: the recent list and one batch's report, whose counters update live until it completes. */
import type { FastifyInstance } from 'fastify';
import { loadBatchReport } from '../../commands/console-batches.js';
import { listLatestBatches } from '../../commands/console-dashboard.js';
import type { ConsoleContext } from '../context.js';
import { sendHtml } from '../http.js';
import { messagePage } from '../pages.js';
import { render } from '../views.js';

export async function batchRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps, guard } = context;

  app.get('/batches', async (request, reply) => {
    const signedIn = await guard(request, reply, 'batches.view');
    if (!signedIn) return reply;
    const recent = await listLatestBatches(deps, signedIn.visitor.workspaceId, 50);
    return sendHtml(
      reply,
      200,
      render('batches', {
        title: 'Batches',
        nav: signedIn.nav,
        csrf: signedIn.csrf,
        base: signedIn.base,
        recent,
        canOpenBatches: true,
      }),
    );
  });

  for (const fragment of [false, true]) {
    app.get<{ Params: { id: string } }>(
      `/batches/:id${fragment ? '/live' : ''}`,
      async (request, reply) => {
        const signedIn = await guard(request, reply, 'batches.view');
        if (!signedIn) return reply;
        const report = await loadBatchReport(
          deps,
          signedIn.visitor.workspaceId,
          Number(request.params.id),
        );
        if (!report) {
          return messagePage(reply, 404, {
            title: 'Batch not found',
            text: 'This workspace has no batch with that number.',
            links: [{ label: 'Batches', href: `${signedIn.base}/batches` }],
            nav: signedIn.nav,
            csrf: signedIn.csrf,
          });
        }
        const data = { title: `Batch #${report.batch.id}`, base: signedIn.base, report };
        if (fragment) return sendHtml(reply, 200, render('batch-live', data));
        return sendHtml(
          reply,
          200,
          render('batch', { ...data, nav: signedIn.nav, csrf: signedIn.csrf }),
        );
      },
    );
  }
}
