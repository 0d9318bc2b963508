/**
 * More services → OTP → Sender ids: the workspace's registered senders, per provider (list,
 * register, delete). A sender for one of the workspace's own providers is approved at once; one
 * for `own` waits for the operator (commands/providers/senders.ts requestSender).
 */

import type { FastifyInstance } from 'fastify';
import { listRoutingChoices } from '../../commands/providers/routing-choices.js';
import { deleteSender, listSenders, requestSender } from '../../commands/providers/senders.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import { idParam, redirect, text } from '../http.js';

const LABELS: Record<string, string> = { provider: 'Provider', sender: 'Sender id' };

export async function otpSenderRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  const page = formPage({
    view: 'otp-senders',
    labels: LABELS,
    fallbackField: 'sender',
    load: async ({ visitor }) => {
      const workspace = visitor.workspaceSlug;
      const [senders, routing] = await Promise.all([
        listSenders(deps, { workspace }),
        listRoutingChoices(deps, { workspace }),
      ]);
      return {
        title: 'Sender ids',
        senders,
        providers: routing.providers,
        canManage: can(visitor, 'otp_services.manage'),
        form: { provider: 'own' },
      };
    },
  });

  app.get<{ Querystring: { done?: string } }>(
    '/otp-senders',
    { config: { action: 'otp_services.view' } },
    async (request, reply) =>
      page.show(reply, 200, {
        flash: request.query.done === 'deleted' ? 'The sender id was deleted.' : undefined,
      }),
  );

  app.post('/otp-senders', { config: { action: 'otp_services.manage' } }, async (_, reply) =>
    page.submit(reply, {
      run: (form, { visitor, actor }) =>
        requestSender(
          deps,
          {
            workspace: visitor.workspaceSlug,
            provider: text(form, 'provider'),
            sender: text(form, 'sender'),
          },
          actor,
        ),
      done: (registered) =>
        page.show(reply, 201, {
          flash: registered.approved
            ? `"${registered.sender}" is registered and approved for ${registered.providerSlug}.`
            : `"${registered.sender}" is registered for ${registered.providerSlug} and waits for the operator's approval.`,
        }),
    }),
  );

  app.post<{ Params: { id: string } }>(
    '/otp-senders/:id/delete',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const id = idParam(request.params.id);
      if (id === undefined)
        return page.show(reply, 404, {
          errors: { notice: 'This workspace has no such sender id.' },
        });
      return page.act(reply, {
        run: ({ visitor, actor }) =>
          deleteSender(deps, { workspace: visitor.workspaceSlug, id }, actor),
        done: (_, { base }) => redirect(request, reply, `${base}/otp-senders?done=deleted`),
      });
    },
  );
}
