/**
 * The audit log of the workspace, for owners and admins; owners may also erase one person's number
 * from the workspace there (`herald recipient erase --workspace`), which the log then records.
 */
import type { FastifyInstance } from 'fastify';
import { listAudit } from '../../commands/audit.js';
import { eraseRecipientNumber } from '../../commands/messaging/recipient-erasure.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import { redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  erased:
    'The number was erased from this workspace: its messages and codes keep only its last four digits, and an opt-out still holds.',
  unchanged:
    'Nothing to erase: this workspace holds that number nowhere (already erased, or never held).',
};

export async function auditRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  const page = formPage<{ before?: number }>({
    view: 'audit',
    labels: { number: 'Number' },
    fallbackField: 'number',
    load: async ({ visitor }, { before }) => ({
      title: 'Audit log',
      ...(await listAudit(deps, {
        workspaceId: visitor.workspaceId,
        ...(before !== undefined && Number.isSafeInteger(before) && before > 0 && { before }),
      })),
      canErase: can(visitor, 'recipients.erase'),
      form: { number: '' },
    }),
    shownAgain: (form) => ({ number: text(form, 'number') ?? '' }),
  });

  app.get<{ Querystring: { before?: string; done?: string } }>(
    '/audit',
    { config: { action: 'audit.view' } },
    async (request, reply) =>
      page.show(reply, 200, {
        before: Number(request.query.before),
        flash: FLASH[request.query.done ?? ''],
      }),
  );

  app.post(
    '/audit/erase-recipient',
    { config: { action: 'recipients.erase' } },
    async (request, reply) =>
      page.submit(reply, {
        run: (form, { visitor, actor }) =>
          eraseRecipientNumber(
            deps,
            { number: text(form, 'number'), workspace: visitor.workspaceSlug },
            actor,
          ),
        done: (erased, { base }) =>
          redirect(
            request,
            reply,
            `${base}/audit?done=${erased.changed === 0 ? 'unchanged' : 'erased'}`,
          ),
      }),
  );
}
