/** Developer Tools → Webhooks: endpoints (secret shown once; enable, disable, delete) and each one's attempts log. */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  listWebhookEndpointAttempts,
  listWorkspaceWebhookEndpoints,
} from '../../commands/webhooks/webhooks.js';
import { RECIPIENT_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.js';
import { can } from '../access.js';
import { audit } from '../audit.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, list, redirect, text } from '../http.js';
import { messagePage } from '../pages.js';

const LABELS: Record<string, string> = { url: 'URL', events: 'Events', description: 'Description' };
const DONE: Record<string, string> = {
  enabled: 'The endpoint takes new events again.',
  disabled: 'The endpoint is disabled: it gets no new events.',
  deleted: 'The endpoint and its attempts log were deleted.',
};

export async function webhookRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { form?: Form; errors?: Record<string, string>; flash?: string; secret?: string } = {},
  ) {
    const { endpoints } = await listWorkspaceWebhookEndpoints(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    return reply.page(
      'webhooks',
      {
        title: 'Webhooks',
        endpoints,
        eventTypes: WEBHOOK_EVENT_TYPES,
        canManage: can(signedIn.visitor, 'webhooks.manage'),
        recipientEvents: signedIn.visitor.permissions.includes('recipients.read')
          ? []
          : RECIPIENT_EVENT_TYPES,
        form: extra.form ?? {},
        errors: extra.errors ?? {},
        flash: extra.flash,
        secret: extra.secret,
      },
      status,
    );
  }

  /** The endpoint, when it is this workspace's. */
  async function ownEndpoint(signedIn: SignedIn, id: string) {
    const { endpoints } = await listWorkspaceWebhookEndpoints(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    return endpoints.find((endpoint) => String(endpoint.id) === id);
  }

  const notHere = (reply: FastifyReply, signedIn: SignedIn) =>
    messagePage(reply, 404, {
      title: 'Endpoint not found',
      text: 'This workspace has no webhook endpoint with that number.',
      links: [{ label: 'Webhooks', href: `${signedIn.base}/developer/webhooks` }],
      nav: signedIn.nav,
      csrf: signedIn.csrf,
    });

  app.get<{ Querystring: { done?: string } }>(
    '/developer/webhooks',
    { config: { action: 'webhooks.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, { flash: DONE[request.query.done ?? ''] });
    },
  );

  app.post(
    '/developer/webhooks',
    { config: { action: 'webhooks.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const form = formOf(request);
      const created = await orRefusal(() =>
        createWebhookEndpoint(deps, {
          workspace: signedIn.visitor.workspaceSlug,
          url: text(form, 'url'),
          events: list(form, 'events'),
          description: text(form, 'description'),
          by: { userId: signedIn.visitor.userId },
        }),
      );
      if (created instanceof InputError) {
        return page(reply, signedIn, created.status, {
          form,
          errors: formErrors(created, LABELS, 'events'),
        });
      }
      const { endpoint, secret } = created;
      await audit(deps, request, signedIn.visitor, 'webhook.created', `webhook ${endpoint.url}`, {
        events: endpoint.events.join(','),
      });
      return page(reply, signedIn, 201, { secret });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/developer/webhooks/:id',
    { config: { action: 'webhooks.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      const endpoint = await ownEndpoint(signedIn, request.params.id);
      if (!endpoint) return notHere(reply, signedIn);
      const { attempts } = await listWebhookEndpointAttempts(deps, { id: endpoint.id });
      return reply.page('webhook-attempts', { title: 'Webhook attempts', endpoint, attempts });
    },
  );

  for (const action of ['enable', 'disable', 'delete'] as const) {
    app.post<{ Params: { id: string } }>(
      `/developer/webhooks/:id/${action}`,
      { config: { action: 'webhooks.manage' } },
      async (request, reply) => {
        const signedIn = request.member;
        const endpoint = await ownEndpoint(signedIn, request.params.id);
        if (!endpoint) return notHere(reply, signedIn);
        const change = {
          enable: enableWebhookEndpoint,
          disable: disableWebhookEndpoint,
          delete: deleteWebhookEndpoint,
        }[action];
        const changed = await orRefusal(async () => {
          await change(deps, { id: endpoint.id, by: { userId: signedIn.visitor.userId } });
        });
        if (changed instanceof InputError) {
          return messagePage(reply, changed.status, {
            title: 'Not changed',
            text: changed.message,
            links: [{ label: 'Webhooks', href: `${signedIn.base}/developer/webhooks` }],
            nav: signedIn.nav,
            csrf: signedIn.csrf,
          });
        }
        await audit(
          deps,
          request,
          signedIn.visitor,
          `webhook.${action}d`,
          `webhook ${endpoint.url}`,
        );
        return redirect(request, reply, `${signedIn.base}/developer/webhooks?done=${action}d`);
      },
    );
  }
}
