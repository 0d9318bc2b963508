/**
 * A batch's report: routing, provider, a delivery breakdown, counters and recipients that update
 * live until the receipts are in (or its validity window closes), failures by error code, and its
 * recipients a page at a time (numbers masked, in errors too, unless the member has recipients.read).
 * A scheduled or sending batch can be canceled, after a confirmation page (no script needed).
 * The list of batches is the Campaigns page.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { loadBatchRecipients, loadBatchReport } from '../../commands/console/batches.js';
import { cancelCampaign } from '../../commands/messaging/cancel-campaign.js';
import { waitingForQuietHours } from '../../commands/messaging/quiet-hours.js';
import { HeraldError } from '../../domain/errors.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import type { SignedIn } from '../guard.js';
import { idParam, redirect, sendHtml } from '../http.js';
import { messagePage } from '../pages.js';
import { render } from '../views.js';

const DONE: Record<string, string> = {
  created: 'The campaign was created and is sending.',
  paused:
    'The campaign was saved, but its dispatch was not confirmed, so it is paused. An operator can resume it with herald campaign resume.',
  scheduled: 'The campaign was created and is scheduled.',
  canceled:
    'The batch was canceled: no more of its messages are taken for sending. Any already being submitted finish and are counted as they settle.',
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
  const { deps } = context;

  const notFound = (reply: FastifyReply, signedIn: SignedIn) =>
    messagePage(reply, 404, {
      title: 'Batch not found',
      text: 'This workspace has no batch with that number.',
      links: [{ label: 'Campaigns', href: `${signedIn.base}/campaigns` }],
      nav: signedIn.nav,
      csrf: signedIn.csrf,
    });

  // The list moved to the Campaigns page; old links and bookmarks land there.
  app.get('/batches', { config: { action: 'batches.view' } }, async (request, reply) => {
    const signedIn = request.member;
    return redirect(request, reply, `${signedIn.base}/campaigns`);
  });

  // The page, and its live part alone (figures, failures and the recipients shown), which asks
  // for itself again while anything may still change: receipts included, after `completed`.
  for (const fragment of [false, true]) {
    app.get<{ Params: { id: string }; Querystring: { after?: string; done?: string } }>(
      `/batches/:id${fragment ? '/live' : ''}`,
      { config: { action: 'batches.view' } },
      async (request, reply) => {
        const signedIn = request.member;
        const fullNumbers = can(signedIn.visitor, 'recipients.view');
        const report = await loadBatchReport(
          deps,
          signedIn.visitor.workspaceId,
          idParam(request.params.id) ?? 0,
          { fullNumbers },
        );
        if (!report) return notFound(reply, signedIn);
        const afterSeq = afterSeqOf(request.query.after);
        const data = {
          title: `Batch #${report.batch.id}`,
          base: signedIn.base,
          report,
          canCancel: can(signedIn.visitor, 'campaigns.cancel'),
          // Marketing messages still queued outside their recipients' quiet hours window.
          waitingForQuietHours:
            report.batch.status === 'queued'
              ? await waitingForQuietHours(deps, report.batch.id)
              : 0,
          recipients: await loadBatchRecipients(deps, report.batch.id, { afterSeq, fullNumbers }),
          fullNumbers,
          afterSeq,
          firstRecipients: afterSeq === 0,
        };
        if (fragment) return sendHtml(reply, 200, render('batch-live', data));
        return reply.page('batch', { ...data, flash: doneNotice(request.query.done) });
      },
    );
  }

  // The confirmation: what a cancel stops and what it cannot.
  app.get<{ Params: { id: string } }>(
    '/batches/:id/cancel',
    { config: { action: 'campaigns.cancel' } },
    async (request, reply) => {
      const signedIn = request.member;
      const report = await loadBatchReport(
        deps,
        signedIn.visitor.workspaceId,
        idParam(request.params.id) ?? 0,
      );
      if (!report) return notFound(reply, signedIn);
      const batchPage = `${signedIn.base}/batches/${report.batch.id}`;
      if (!report.cancelable) return redirect(request, reply, batchPage);
      return reply.page('batch-cancel', { title: `Cancel batch #${report.batch.id}`, report });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/batches/:id/cancel',
    { config: { action: 'campaigns.cancel' } },
    async (request, reply) => {
      const signedIn = request.member;
      const id = idParam(request.params.id);
      if (id === undefined) return notFound(reply, signedIn);
      try {
        await cancelCampaign(deps, signedIn.actor, signedIn.visitor.workspaceId, id);
      } catch (error) {
        if (!(error instanceof HeraldError)) throw error;
        if (error.code === 'not_found') return notFound(reply, signedIn);
        if (error.code !== 'conflict') throw error;
        return messagePage(reply, 409, {
          title: 'Already completed',
          text: `Batch #${id} has already completed: every message was sent or failed, so there is nothing to cancel.`,
          links: [{ label: `Batch #${id}`, href: `${signedIn.base}/batches/${id}` }],
          nav: signedIn.nav,
          csrf: signedIn.csrf,
        });
      }
      return redirect(request, reply, `${signedIn.base}/batches/${id}?done=canceled`);
    },
  );
}
