/**
 * Developer Tools → Webhooks: endpoints (secret shown once; enable, disable, delete), a sample
 * body per event type, and each endpoint's page: its attempts, a test event, a secret rotation
 * with an overlap window, and a replay of a delivery that failed.
 */

import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  DEFAULT_OVERLAP_HOURS,
  replayWebhookEvent,
  rotateWebhookSecret,
  sendTestWebhookEvent,
  webhookSamples,
  webhookSecretOverlap,
} from '../../commands/webhooks/webhook-tools.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  listWebhookEndpointAttempts,
  listWorkspaceWebhookEndpoints,
} from '../../commands/webhooks/webhooks.js';
import type { WebhookEndpoint } from '../../db/webhooks.js';
import { RECIPIENT_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { orRefusal } from '../form-errors.js';
import { formPage } from '../form-page.js';
import type { SignedIn } from '../guard.js';
import { formOf, list, redirect, text } from '../http.js';
import { messagePage } from '../pages.js';

const LABELS: Record<string, string> = { url: 'URL', events: 'Events', description: 'Description' };
const DONE: Record<string, string> = {
  enabled: 'The endpoint takes new events again.',
  disabled: 'The endpoint is disabled: it gets no new events.',
  deleted: 'The endpoint and its attempts log were deleted.',
};
const ENDPOINT_DONE: Record<string, string> = {
  test: 'Test event queued: its attempts appear below as it is delivered.',
  replayed: 'Replay queued: the same body and webhook-id go out again, logged below.',
};
/** The overlap windows offered when rotating a secret, in hours. */
const OVERLAP_CHOICES = [0, 1, 24, 72, 168];

export async function webhookRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  const listPage = formPage<{ secret?: string }>({
    view: 'webhooks',
    labels: LABELS,
    fallbackField: 'events',
    load: async ({ visitor }, { secret }) => ({
      title: 'Webhooks',
      endpoints: (await listWorkspaceWebhookEndpoints(deps, { workspace: visitor.workspaceSlug }))
        .endpoints,
      eventTypes: WEBHOOK_EVENT_TYPES,
      canManage: can(visitor, 'webhooks.manage'),
      recipientEvents: visitor.permissions.includes('recipients.read') ? [] : RECIPIENT_EVENT_TYPES,
      samples: webhookSamples(),
      secret,
    }),
  });

  /** An endpoint's page: its tools and attempts; `secret` right after a rotation, only then. */
  async function endpointPage(
    reply: FastifyReply,
    signedIn: SignedIn,
    endpoint: WebhookEndpoint,
    extra: { status?: number; flash?: string; notice?: string; secret?: string } = {},
  ) {
    const { attempts } = await listWebhookEndpointAttempts(deps, { id: endpoint.id });
    const delivered = new Set(
      attempts.filter((attempt) => attempt.succeeded).map((attempt) => attempt.eventId),
    );
    const replayable = new Set<string>();
    const rows = attempts.map((attempt) => {
      // One Replay button per undelivered event, on its newest attempt; a key per rendered button.
      const offer =
        !attempt.succeeded && !delivered.has(attempt.eventId) && !replayable.has(attempt.eventId);
      if (offer) replayable.add(attempt.eventId);
      return { ...attempt, replayKey: offer ? randomUUID() : null };
    });
    return reply.page(
      'webhook-attempts',
      {
        title: 'Webhook attempts',
        endpoint,
        attempts: rows,
        canManage: can(signedIn.visitor, 'webhooks.manage'),
        overlapUntil: await webhookSecretOverlap(deps, endpoint.id),
        overlapChoices: OVERLAP_CHOICES,
        defaultOverlap: DEFAULT_OVERLAP_HOURS,
        flash: extra.flash,
        notice: extra.notice,
        secret: extra.secret,
      },
      extra.status ?? 200,
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
    async (request, reply) => listPage.show(reply, 200, { flash: DONE[request.query.done ?? ''] }),
  );

  app.post('/developer/webhooks', { config: { action: 'webhooks.manage' } }, async (_, reply) =>
    listPage.submit(reply, {
      run: (form, { visitor, actor }) =>
        createWebhookEndpoint(
          deps,
          {
            workspace: visitor.workspaceSlug,
            url: text(form, 'url'),
            events: list(form, 'events'),
            description: text(form, 'description'),
          },
          actor,
        ),
      done: (created) => listPage.show(reply, 201, { secret: created.secret }),
    }),
  );

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>(
    '/developer/webhooks/:id',
    { config: { action: 'webhooks.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      const endpoint = await ownEndpoint(signedIn, request.params.id);
      if (!endpoint) return notHere(reply, signedIn);
      return endpointPage(reply, signedIn, endpoint, {
        flash: ENDPOINT_DONE[request.query.done ?? ''],
      });
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
          await change(deps, { id: endpoint.id }, signedIn.actor);
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
        return redirect(request, reply, `${signedIn.base}/developer/webhooks?done=${action}d`);
      },
    );
  }

  app.post<{ Params: { id: string } }>(
    '/developer/webhooks/:id/rotate-secret',
    { config: { action: 'webhooks.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const endpoint = await ownEndpoint(signedIn, request.params.id);
      if (!endpoint) return notHere(reply, signedIn);
      const hours = Number(text(formOf(request), 'overlap_hours') ?? DEFAULT_OVERLAP_HOURS);
      const rotated = await orRefusal(() =>
        rotateWebhookSecret(deps, { id: endpoint.id, overlapHours: hours }, signedIn.actor),
      );
      if (rotated instanceof InputError)
        return endpointPage(reply, signedIn, endpoint, {
          status: rotated.status,
          notice: rotated.render(() => 'Overlap'),
        });
      // The new secret is in this answer only: it is not a redirect a reload could repeat.
      return endpointPage(reply, signedIn, rotated.endpoint, { secret: rotated.secret });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/developer/webhooks/:id/test',
    { config: { action: 'webhooks.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const endpoint = await ownEndpoint(signedIn, request.params.id);
      if (!endpoint) return notHere(reply, signedIn);
      const sent = await orRefusal(() =>
        sendTestWebhookEvent(
          deps,
          { id: endpoint.id, type: text(formOf(request), 'type') },
          signedIn.actor,
        ),
      );
      if (sent instanceof InputError)
        return endpointPage(reply, signedIn, endpoint, {
          status: sent.status,
          notice: sent.render(() => 'Event'),
        });
      return redirect(
        request,
        reply,
        `${signedIn.base}/developer/webhooks/${endpoint.id}?done=test`,
      );
    },
  );

  app.post<{ Params: { id: string } }>(
    '/developer/webhooks/:id/replay',
    { config: { action: 'webhooks.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const endpoint = await ownEndpoint(signedIn, request.params.id);
      if (!endpoint) return notHere(reply, signedIn);
      const form = formOf(request);
      const replayed = await orRefusal(() =>
        replayWebhookEvent(
          deps,
          { id: endpoint.id, eventId: text(form, 'event') ?? '', key: text(form, 'key') ?? '' },
          signedIn.actor,
        ),
      );
      if (replayed instanceof InputError)
        return endpointPage(reply, signedIn, endpoint, {
          status: replayed.status,
          notice: replayed.message,
        });
      return redirect(
        request,
        reply,
        `${signedIn.base}/developer/webhooks/${endpoint.id}?done=replayed`,
      );
    },
  );
}
