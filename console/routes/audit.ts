/**
 * The audit log of the workspace, for owners and admins; owners may also erase one person's number
 * from the workspace there (`herald recipient erase --workspace`), which the log then records.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { listAudit } from '../../commands/audit.js';
import { InputError } from '../../commands/input.js';
import { eraseRecipientNumber } from '../../commands/messaging/recipient-erasure.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { formOf, redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  erased:
    'The number was erased from this workspace: its messages and codes keep only its last four digits, and an opt-out still holds.',
  unchanged:
    'Nothing to erase: this workspace holds that number nowhere (already erased, or never held).',
};

export async function auditRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { before?: number; flash?: string; number?: string; errors?: Record<string, string> },
  ) {
    const before = extra.before;
    const entries = await listAudit(deps, {
      workspaceId: signedIn.visitor.workspaceId,
      ...(before !== undefined && Number.isSafeInteger(before) && before > 0 && { before }),
    });
    return reply.page(
      'audit',
      {
        title: 'Audit log',
        ...entries,
        canErase: can(signedIn.visitor, 'recipients.erase'),
        number: extra.number ?? '',
        errors: extra.errors ?? {},
        flash: extra.flash,
      },
      status,
    );
  }

  app.get<{ Querystring: { before?: string; done?: string } }>(
    '/audit',
    { config: { action: 'audit.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, {
        before: Number(request.query.before),
        flash: FLASH[request.query.done ?? ''],
      });
    },
  );

  app.post(
    '/audit/erase-recipient',
    { config: { action: 'recipients.erase' } },
    async (request, reply) => {
      const signedIn = request.member;
      const number = text(formOf(request), 'number');
      const erased = await orRefusal(() =>
        eraseRecipientNumber(
          deps,
          { number, workspace: signedIn.visitor.workspaceSlug },
          signedIn.actor,
        ),
      );
      if (erased instanceof InputError) {
        return page(reply, signedIn, erased.status, {
          number,
          errors: formErrors(erased, { number: 'Number' }, 'number'),
        });
      }
      if (erased.changed === 0)
        return redirect(request, reply, `${signedIn.base}/audit?done=unchanged`);
      return redirect(request, reply, `${signedIn.base}/audit?done=erased`);
    },
  );
}
