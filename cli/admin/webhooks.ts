import { randomUUID } from 'node:crypto';
import {
  replayWebhookEvent,
  rotateWebhookSecret,
  sendTestWebhookEvent,
} from '../../commands/webhooks/webhook-tools.js';
/** herald webhook create|list|enable|disable|delete|attempts: options in, use-case, output. */
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  listWebhookEndpointAttempts,
  listWorkspaceWebhookEndpoints,
} from '../../commands/webhooks/webhooks.js';
import type { WebhookEndpoint } from '../../db/webhooks.js';
import type { HostResolver } from '../../security/ssrf.js';
import { type AdminContext, operatorActor } from '../context.js';
import {
  type CommandResult,
  idOption,
  list,
  type Options,
  run,
  text,
  wholeNumber,
} from './options.js';
import { type AdminCommand, optional, required, text as usageText } from './table.js';

/** Tests substitute the resolver to simulate DNS answers. */
type WebhookContext = AdminContext & { webhookResolver?: HostResolver };

const iso = (date: Date | null) => date?.toISOString() ?? null;

function presentEndpoint(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    disabled_at: iso(endpoint.disabledAt),
    disabled_reason: endpoint.disabledReason,
    created_at: endpoint.createdAt.toISOString(),
  };
}

/**
 * herald webhook create --workspace <slug> --url <url> --events <a,b,...|all> [--description <text>]
 * → {"id", "url", "events", "secret"}. The secret is shown here only; it is stored encrypted.
 */
export async function webhookCreate(
  context: WebhookContext,
  options: Options,
): Promise<CommandResult> {
  const { endpoint, secret, workspace } = await run(
    createWebhookEndpoint(
      context,
      {
        workspace: text(options, 'workspace'),
        url: text(options, 'url'),
        events: list(options, 'events'),
        description: text(options, 'description'),
      },
      operatorActor(),
    ),
  );
  return {
    json: { id: endpoint.id, url: endpoint.url, events: endpoint.events, secret },
    human: [
      `Created webhook endpoint ${endpoint.id} in ${workspace.slug}: ${endpoint.url}`,
      `Events: ${endpoint.events.join(', ')}`,
      `Signing secret (shown only now): ${secret}`,
    ].join('\n'),
  };
}

/** herald webhook list --workspace <slug> → {"endpoints": [...]} (never the secrets) */
export async function webhookList(context: AdminContext, options: Options): Promise<CommandResult> {
  const { endpoints, workspace } = await run(
    listWorkspaceWebhookEndpoints(context, { workspace: text(options, 'workspace') }),
  );
  return {
    json: { endpoints: endpoints.map(presentEndpoint) },
    human: endpoints.length
      ? endpoints
          .map(
            (endpoint) =>
              `${endpoint.id}  ${endpoint.url}  ${endpoint.events.join(',')}  ` +
              (endpoint.enabled
                ? 'enabled'
                : `disabled ${iso(endpoint.disabledAt)}: ${endpoint.disabledReason}`),
          )
          .join('\n')
      : `${workspace.slug} has no webhook endpoints`,
  };
}

async function webhookSetEnabled(context: AdminContext, options: Options, enabled: boolean) {
  const id = idOption(options, 'webhook endpoint');
  const endpoint = await run(
    enabled
      ? enableWebhookEndpoint(context, { id }, operatorActor())
      : disableWebhookEndpoint(context, { id }, operatorActor()),
  );
  return {
    json: presentEndpoint(endpoint),
    human: `Webhook endpoint ${id} is now ${enabled ? 'enabled' : 'disabled'}`,
  };
}

/** herald webhook enable --id <id>: takes new events again (earlier ones are not replayed). */
export const webhookEnable = (context: AdminContext, options: Options) =>
  webhookSetEnabled(context, options, true);
/** herald webhook disable --id <id>: no new events; deliveries in flight stop at their next attempt. */
export const webhookDisable = (context: AdminContext, options: Options) =>
  webhookSetEnabled(context, options, false);

/** herald webhook delete --id <id> → {"deleted": true}; its attempts log goes with it. */
export async function webhookDelete(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'webhook endpoint');
  await run(deleteWebhookEndpoint(context, { id }, operatorActor()));
  return { json: { deleted: true }, human: `Deleted webhook endpoint ${id}` };
}

/**
 * herald webhook attempts --id <endpoint> [--limit n] → {"endpoint", "attempts": [...]}, newest
 * first: event, type, attempt number, time, HTTP status or error, duration, next retry or final.
 */
export async function webhookAttempts(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'webhook endpoint');
  const { endpoint, attempts: listed } = await run(
    listWebhookEndpointAttempts(context, { id, limit: wholeNumber(options, 'limit') }),
  );
  const attempts = listed.map((attempt) => ({
    event_id: attempt.eventId,
    type: attempt.type,
    attempt: attempt.attempt,
    attempted_at: attempt.attemptedAt.toISOString(),
    status_code: attempt.statusCode,
    error: attempt.error,
    duration_ms: attempt.durationMs,
    succeeded: attempt.succeeded,
    next_attempt_at: iso(attempt.nextAttemptAt),
    final: attempt.succeeded || attempt.nextAttemptAt === null,
  }));
  return {
    json: { endpoint: presentEndpoint(endpoint), attempts },
    human: [
      `Webhook endpoint ${endpoint.id} ${endpoint.url}: ${
        endpoint.enabled
          ? 'enabled'
          : `disabled ${iso(endpoint.disabledAt)}: ${endpoint.disabledReason}`
      }`,
      ...(attempts.length
        ? attempts.map(
            (attempt) =>
              `${attempt.attempted_at}  ${attempt.event_id}  ${attempt.type}  #${attempt.attempt}  ` +
              `${attempt.succeeded ? `HTTP ${attempt.status_code}` : attempt.error}  ${attempt.duration_ms} ms  ` +
              (attempt.succeeded
                ? 'delivered'
                : attempt.next_attempt_at
                  ? `next ${attempt.next_attempt_at}`
                  : 'final'),
          )
        : ['No delivery attempts yet']),
    ].join('\n'),
  };
}

/**
 * herald webhook rotate-secret --id <id> [--overlap-hours 0-168] → {"id", "secret",
 * "previous_secret_until"}: the new secret, shown only now; the old one keeps signing beside it
 * for the overlap (24 h by default; 0 ends it at once).
 */
export async function webhookRotateSecret(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'webhook endpoint');
  const { secret, previousUntil } = await run(
    rotateWebhookSecret(
      context,
      { id, overlapHours: wholeNumber(options, 'overlap-hours') },
      operatorActor(),
    ),
  );
  return {
    json: { id, secret, previous_secret_until: iso(previousUntil) },
    human: [
      `New signing secret of webhook endpoint ${id} (shown only now): ${secret}`,
      previousUntil
        ? `The previous secret signs too until ${previousUntil.toISOString()}`
        : 'The previous secret no longer signs',
    ].join('\n'),
  };
}

/** herald webhook test --id <id> [--type <event type>] → {"event_id", "type"}: a test event. */
export async function webhookTest(context: AdminContext, options: Options): Promise<CommandResult> {
  const id = idOption(options, 'webhook endpoint');
  const sent = await run(
    sendTestWebhookEvent(context, { id, type: text(options, 'type') }, operatorActor()),
  );
  return {
    json: { event_id: sent.eventId, type: sent.type },
    human: `Test ${sent.type} event ${sent.eventId} queued for webhook endpoint ${id}; see webhook attempts`,
  };
}

/**
 * herald webhook replay --id <id> --event <msg_…> [--key <key>] → {"event_id", "created"}: the
 * event delivered again (same body and webhook-id). The same --key replays it once only.
 */
export async function webhookReplay(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'webhook endpoint');
  const replay = await run(
    replayWebhookEvent(
      context,
      {
        id,
        eventId: text(options, 'event') ?? '',
        key: text(options, 'key') ?? randomUUID(),
      },
      operatorActor(),
    ),
  );
  return {
    json: { event_id: replay.eventId, created: replay.created },
    human: replay.created
      ? `Replay ${replay.eventId} queued for webhook endpoint ${id}; see webhook attempts`
      : `Already replayed with this key as ${replay.eventId}`,
  };
}

/** Shared by enable, disable and delete: one usage line, `webhook enable|disable|delete`. */
const BY_ID = [[[required('id', '<id>')]]];

export const WEBHOOK_COMMANDS: AdminCommand[] = [
  {
    name: 'webhook create',
    run: webhookCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('url', '<http(s) url>'),
          required('events', '<a,b,...|all>'),
        ],
        [optional('description', '<text>'), usageText('  (the signing secret is shown once)')],
        [usageText('events: message.sent, message.delivered, message.failed,')],
        [usageText('campaign.completed, campaign.canceled, otp.accepted, otp.verified,')],
        [usageText('otp.expired, otp.range_blocked, spend.cap_near')],
      ],
    ],
  },
  { name: 'webhook list', run: webhookList, synopses: [[[required('workspace', '<slug>')]]] },
  { name: 'webhook enable', run: webhookEnable, synopses: BY_ID },
  { name: 'webhook disable', run: webhookDisable, synopses: BY_ID },
  { name: 'webhook delete', run: webhookDelete, synopses: BY_ID },
  {
    name: 'webhook attempts',
    run: webhookAttempts,
    synopses: [[[required('id', '<id>'), optional('limit', '1-1000')]]],
    summary: 'the delivery log, newest first',
  },
  {
    name: 'webhook rotate-secret',
    run: webhookRotateSecret,
    synopses: [[[required('id', '<id>'), optional('overlap-hours', '0-168')]]],
    summary: 'a new secret (shown once); the old one also signs for the overlap, 24 h by default',
  },
  {
    name: 'webhook test',
    run: webhookTest,
    synopses: [[[required('id', '<id>'), optional('type', '<event type>')]]],
    summary: "a test event (the type's sample, marked test) through the normal delivery",
  },
  {
    name: 'webhook replay',
    run: webhookReplay,
    synopses: [[[required('id', '<id>'), required('event', '<msg_…>'), optional('key', '<key>')]]],
    summary: 'delivers an undelivered event again; the same --key replays it once',
  },
];
