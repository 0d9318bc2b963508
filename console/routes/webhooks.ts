/**
 * Developer Tools → Webhooks: endpoints (secret shown once; enable, disable, delete), a sample
 * body per event type, and each endpoint's page: its attempts, a test event, a secret rotation
 * with an overlap window, and a replay of a delivery that failed.
 */

import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
import { formOf, list, redirect, text } from '../http.js';
import { messagePage } from '../pages.js';

const LABELS: Record<string, string> = { url: 'URL', events: 'Events', description: 'Description' };
/** The endpoint tools' inputs, as their refusals name them. */
const ENDPOINT_LABELS: Record<string, string> = { overlapHours: 'Overlap', type: 'Event' };
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
  const endpointPage = formPage<{ endpoint: WebhookEndpoint; secret?: string }>({
    view: 'webhook-attempts',
    labels: ENDPOINT_LABELS,
    load: async ({ visitor }, { endpoint, secret }) => {
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
      return {
        title: 'Webhook attempts',
        endpoint,
        attempts: rows,
        canManage: can(visitor, 'webhooks.manage'),
        overlapUntil: await webhookSecretOverlap(deps, endpoint.id),
        overlapChoices: OVERLAP_CHOICES,
        defaultOverlap: DEFAULT_OVERLAP_HOURS,
        secret,
      };
    },
  });

  /** The endpoint the URL names, when it is this workspace's; undefined once a 404 page said not. */
  async function endpointOf(reply: FastifyReply, id: string) {
    const signedIn = reply.request.member;
    const { endpoints } = await listWorkspaceWebhookEndpoints(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    const endpoint = endpoints.find((each) => String(each.id) === id);
    if (endpoint) return endpoint;
    await messagePage(reply, 404, {
      title: 'Endpoint not found',
      text: 'This workspace has no webhook endpoint with that number.',
      links: [{ label: 'Webhooks', href: `${signedIn.base}/developer/webhooks` }],
      nav: signedIn.nav,
      csrf: signedIn.csrf,
    });
    return undefined;
  }

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
      const endpoint = await endpointOf(reply, request.params.id);
      if (!endpoint) return reply;
      return endpointPage.show(reply, 200, {
        endpoint,
        flash: ENDPOINT_DONE[request.query.done ?? ''],
      });
    },
  );

  /** A POST on the endpoint the URL names; a 404 page when it is not this workspace's. */
  const onEndpoint = (
    path: string,
    handle: (
      endpoint: WebhookEndpoint,
      request: FastifyRequest,
      reply: FastifyReply,
    ) => Promise<FastifyReply>,
  ) =>
    app.post<{ Params: { id: string } }>(
      `/developer/webhooks/:id/${path}`,
      { config: { action: 'webhooks.manage' } },
      async (request, reply) => {
        const endpoint = await endpointOf(reply, request.params.id);
        return endpoint ? handle(endpoint, request, reply) : reply;
      },
    );

  const CHANGES = {
    enable: enableWebhookEndpoint,
    disable: disableWebhookEndpoint,
    delete: deleteWebhookEndpoint,
  };
  for (const [action, change] of Object.entries(CHANGES)) {
    onEndpoint(action, async (endpoint, request, reply) => {
      const signedIn = request.member;
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
    });
  }

  // The endpoint page's tools: a refusal is the page's notice.
  onEndpoint('rotate-secret', (endpoint, request, reply) =>
    endpointPage.act(reply, {
      state: { endpoint },
      run: ({ actor }) => {
        const hours = Number(text(formOf(request), 'overlap_hours') ?? DEFAULT_OVERLAP_HOURS);
        return rotateWebhookSecret(deps, { id: endpoint.id, overlapHours: hours }, actor);
      },
      // The new secret is in this answer only: it is not a redirect a reload could repeat.
      done: (rotated) =>
        endpointPage.show(reply, 200, { endpoint: rotated.endpoint, secret: rotated.secret }),
    }),
  );

  onEndpoint('test', (endpoint, request, reply) =>
    endpointPage.act(reply, {
      state: { endpoint },
      run: ({ actor }) =>
        sendTestWebhookEvent(deps, { id: endpoint.id, type: text(formOf(request), 'type') }, actor),
      done: (_, { base }) =>
        redirect(request, reply, `${base}/developer/webhooks/${endpoint.id}?done=test`),
    }),
  );

  onEndpoint('replay', (endpoint, request, reply) =>
    endpointPage.act(reply, {
      state: { endpoint },
      run: ({ actor }) => {
        const form = formOf(request);
        return replayWebhookEvent(
          deps,
          { id: endpoint.id, eventId: text(form, 'event') ?? '', key: text(form, 'key') ?? '' },
          actor,
        );
      },
      done: (_, { base }) =>
        redirect(request, reply, `${base}/developer/webhooks/${endpoint.id}?done=replayed`),
    }),
  );
}
