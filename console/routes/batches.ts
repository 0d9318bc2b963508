/**
 * A batch's report: routing, provider, counters that update live until it completes, failures by
 * error, and its recipients a page at a time (masked unless the member has recipients.read).
 * The list of batches is the Campaigns page.
 */
import type { FastifyInstance } from 'fastify';
import { loadBatchRecipients, loadBatchReport } from '../../commands/console-batches.js';
import { waitingForQuietHours } from '../../commands/quiet-hours.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { idParam, redirect, sendHtml } from '../http.js';
import { messagePage } from '../pages.js';
import { render } from '../views.js';

const DONE: Record<string, string> = {
  created: 'The campaign was created and is sending.',
  paused:
    'The campaign was saved, but its dispatch was not confirmed, so it is paused. An operator can resume it with herald campaign resume.',
};

function doneNotice(done: unknown): string | undefined {
  return typeof done === 'string' && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
}

/** `after` of the recipients table: a message's position in the batch, else the first page. */
function afterSeqOf(value: unknown): number {
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) return 0;
  return Number(value);
}

export async function batchRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps, guard } = context;

  // The list moved to the Campaigns page; old links and bookmarks land there.
  app.get('/batches', async (request, reply) => {
    const signedIn = await guard(request, reply, 'batches.view');
    if (!signedIn) return reply;
    return redirect(request, reply, `${signedIn.base}/campaigns`);
  });

  for (const fragment of [false, true]) {
    app.get<{ Params: { id: string }; Querystring: { after?: string; done?: string } }>(
      `/batches/:id${fragment ? '/live' : ''}`,
      async (request, reply) => {
        const signedIn = await guard(request, reply, 'batches.view');
        if (!signedIn) return reply;
        const report = await loadBatchReport(
          deps,
          signedIn.visitor.workspaceId,
          idParam(request.params.id) ?? 0,
        );
        if (!report) {
          return messagePage(reply, 404, {
            title: 'Batch not found',
            text: 'This workspace has no batch with that number.',
            links: [{ label: 'Campaigns', href: `${signedIn.base}/campaigns` }],
            nav: signedIn.nav,
            csrf: signedIn.csrf,
          });
        }
        const data = {
          title: `Batch #${report.batch.id}`,
          base: signedIn.base,
          report,
          // Marketing messages still queued outside their recipients' quiet hours window.
          waitingForQuietHours:
            report.batch.status === 'queued'
              ? await waitingForQuietHours(deps, report.batch.id)
              : 0,
        };
        if (fragment) return sendHtml(reply, 200, render('batch-live', data));
        const fullNumbers = can(signedIn.visitor, 'recipients.view');
        const recipients = await loadBatchRecipients(deps, report.batch.id, {
          afterSeq: afterSeqOf(request.query.after),
          fullNumbers,
        });
        return sendHtml(
          reply,
          200,
          render('batch', {
            ...data,
            nav: signedIn.nav,
            csrf: signedIn.csrf,
            flash: doneNotice(request.query.done),
            recipients,
            fullNumbers,
            firstRecipients: afterSeqOf(request.query.after) === 0,
          }),
        );
      },
    );
  }
}
