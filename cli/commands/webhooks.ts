/** Customer webhook endpoints: create (secret shown once), list, enable, disable, delete, attempts. */
import {
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookAttempts,
  listWebhookEndpoints,
  reserveWebhookEndpointId,
  setWebhookEndpointEnabled,
  type WebhookEndpoint,
} from '../../db/webhooks.js';
import {
  isWebhookEventType,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../domain/webhooks.js';
import { encryptCredentials } from '../../security/credentials.js';
import { type HostResolver, resolveWebhookTarget, UnsafeUrlError } from '../../security/ssrf.js';
import { generateWebhookSecret, webhookSecretContext } from '../../security/webhook-signature.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import {
  type CommandResult,
  idOption,
  type Options,
  optional,
  required,
  workspaceBySlug,
} from './admin.js';

/** Tests substitute the resolver to simulate DNS answers. */
type WebhookContext = AdminContext & { webhookResolver?: HostResolver };

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** `--events a,b,...` or `all`: known event types, each once, in the catalogue's order. */
export function parseEvents(raw: string): WebhookEventType[] {
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 1 && items[0] === 'all') return [...WEBHOOK_EVENT_TYPES];
  if (items.length === 0) throw new UsageError('--events must list at least one event');
  const unknown = items.find((item) => !isWebhookEventType(item));
  if (unknown !== undefined)
    throw new UsageError(
      `Unknown webhook event "${unknown}"; events are ${WEBHOOK_EVENT_TYPES.join(', ')}, or all`,
    );
  return WEBHOOK_EVENT_TYPES.filter((type) => items.includes(type));
}

/** An http(s) URL without credentials whose host is public (unless the operator allows private). */
async function webhookUrl(context: WebhookContext, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url "${raw}" is not an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url "${raw}" is not an http(s) URL`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--url must not contain a user name or password');
  if (url.href.length > 2048) throw new UsageError('--url must be at most 2048 characters');
  try {
    await resolveWebhookTarget(url, {
      allowPrivate: context.env.WEBHOOK_ALLOW_PRIVATE_URLS,
      resolver: context.webhookResolver,
    });
  } catch (error) {
    if (!(error instanceof UnsafeUrlError)) throw error;
    throw new UsageError(
      error.nonPublic
        ? `--url refused: ${error.message}; webhooks go only to public addresses (WEBHOOK_ALLOW_PRIVATE_URLS=true allows private ones)`
        : `--url refused: ${error.message}`,
    );
  }
  return url.href;
}

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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const events = parseEvents(required(options, 'events'));
  const description = optional(options, 'description') ?? null;
  if (description !== null && description.length > 500)
    throw new UsageError('--description must be at most 500 characters');
  const url = await webhookUrl(context, required(options, 'url'));
  const secret = generateWebhookSecret();
  const endpoint = await context.sql.begin(async (tx) => {
    const id = await reserveWebhookEndpointId(tx);
    return insertWebhookEndpoint(tx, {
      id,
      workspaceId: workspace.id,
      url,
      description,
      events,
      secret: encryptCredentials(context.secret, webhookSecretContext(workspace.id, id), secret),
    });
  });
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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const endpoints = (await listWebhookEndpoints(context.sql, workspace.id)).map(presentEndpoint);
  return {
    json: { endpoints },
    human: endpoints.length
      ? endpoints
          .map(
            (endpoint) =>
              `${endpoint.id}  ${endpoint.url}  ${endpoint.events.join(',')}  ` +
              (endpoint.enabled
                ? 'enabled'
                : `disabled ${endpoint.disabled_at}: ${endpoint.disabled_reason}`),
          )
          .join('\n')
      : `${workspace.slug} has no webhook endpoints`,
  };
}

async function webhookSetEnabled(context: AdminContext, options: Options, enabled: boolean) {
  const id = idOption(options, 'webhook endpoint');
  const endpoint = await setWebhookEndpointEnabled(
    context.sql,
    id,
    enabled,
    enabled ? null : 'Disabled by an operator',
  );
  if (!endpoint) throw new UsageError(`No webhook endpoint has the id ${id}`);
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
  if (!(await deleteWebhookEndpoint(context.sql, id)))
    throw new UsageError(`No webhook endpoint has the id ${id}`);
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
  const rawLimit = optional(options, 'limit') ?? '50';
  const limit = Number(rawLimit);
  if (!/^\d+$/.test(rawLimit) || limit < 1 || limit > 1000)
    throw new UsageError('--limit must be a whole number from 1 to 1000');
  const endpoint = await findWebhookEndpoint(context.sql, id);
  if (!endpoint) throw new UsageError(`No webhook endpoint has the id ${id}`);
  const attempts = (await listWebhookAttempts(context.sql, id, limit)).map((attempt) => ({
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
