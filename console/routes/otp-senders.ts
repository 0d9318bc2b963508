/**
 * More services → OTP → Sender ids: the workspace's registered senders, per provider (list,
 * register, delete). A sender for one of the workspace's own providers is approved at once; one
 * for `own` waits for the operator (commands/providers/senders.ts requestSender).
 */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import { listRoutingChoices } from '../../commands/providers/routing-choices.js';
import { deleteSender, listSenders, requestSender } from '../../commands/providers/senders.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, noticeOf, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, idParam, redirect, text } from '../http.js';

const LABELS: Record<string, string> = { provider: 'Provider', sender: 'Sender id' };

export async function otpSenderRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { form?: Form; errors?: Record<string, string>; flash?: string } = {},
  ) {
    const workspace = signedIn.visitor.workspaceSlug;
    const [senders, routing] = await Promise.all([
      listSenders(deps, { workspace }),
      listRoutingChoices(deps, { workspace }),
    ]);
    return reply.page(
      'otp-senders',
      {
        title: 'Sender ids',
        senders,
        providers: routing.providers,
        canManage: can(signedIn.visitor, 'otp_services.manage'),
        form: extra.form ?? { provider: 'own' },
        errors: extra.errors ?? {},
        flash: extra.flash,
      },
      status,
    );
  }

  app.get<{ Querystring: { done?: string } }>(
    '/otp-senders',
    { config: { action: 'otp_services.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, {
        flash: request.query.done === 'deleted' ? 'The sender id was deleted.' : undefined,
      });
    },
  );

  app.post(
    '/otp-senders',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const form = formOf(request);
      const registered = await orRefusal(() =>
        requestSender(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            provider: text(form, 'provider'),
            sender: text(form, 'sender'),
          },
          signedIn.actor,
        ),
      );
      if (registered instanceof InputError) {
        return page(reply, signedIn, registered.status, {
          form,
          errors: formErrors(registered, LABELS, 'sender'),
        });
      }
      return page(reply, signedIn, 201, {
        flash: registered.approved
          ? `"${registered.sender}" is registered and approved for ${registered.providerSlug}.`
          : `"${registered.sender}" is registered for ${registered.providerSlug} and waits for the operator's approval.`,
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/otp-senders/:id/delete',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const id = idParam(request.params.id);
      if (id === undefined) {
        return page(reply, signedIn, 404, {
          errors: { notice: 'This workspace has no such sender id.' },
        });
      }
      const deleted = await orRefusal(() =>
        deleteSender(deps, { workspace: signedIn.visitor.workspaceSlug, id }, signedIn.actor),
      );
      if (deleted instanceof InputError) {
        return page(reply, signedIn, deleted.status, { errors: noticeOf(deleted, LABELS) });
      }
      return redirect(request, reply, `${signedIn.base}/otp-senders?done=deleted`);
    },
  );
}
