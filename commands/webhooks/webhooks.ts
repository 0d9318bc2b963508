/** Customer webhook endpoints: create (the signing secret given once), list, enable, disable, delete, attempts. */
import type { TransactionSql } from '../../db/client.js';
import { findMemberStanding } from '../../db/member-access.js';
import {
  deleteWebhookEndpoint as deleteWebhookEndpointRow,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookAttempts,
  listWebhookEndpoints,
  reserveWebhookEndpointId,
  setWebhookEndpointEnabled,
  type WebhookAttempt,
  type WebhookEndpoint,
} from '../../db/webhooks.js';
import type { Workspace } from '../../db/workspaces.js';
import {
  isWebhookEventType,
  RECIPIENT_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../domain/webhooks.js';
import { encryptCredentials } from '../../security/credentials.js';
import { type HostResolver, resolveWebhookTarget, UnsafeUrlError } from '../../security/ssrf.js';
import { generateWebhookSecret, webhookSecretContext } from '../../security/webhook-signature.js';
import type { Actor } from '../actor.js';
import { type AuditLine, writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  fieldsOf,
  InputError,
  invalid,
  notFound,
  optionalText,
  refuseAll,
  requiredText,
} from '../input.js';
import type { ActingMember } from '../team/members.js';
import { findWorkspace } from '../team/workspaces.js';

const MAX_DESCRIPTION_LENGTH = 500;
const MAX_URL_LENGTH = 2048;
const ATTEMPTS_LIMIT = { min: 1, max: 1000, default: 50 };

export interface CreateWebhookEndpointInput {
  workspace?: string;
  /** An http(s) URL without credentials whose host is public (unless the operator allows private). */
  url?: string;
  /** Event types, each once, or `['all']`. */
  events?: string[];
  description?: string;
}

const field = fieldsOf<CreateWebhookEndpointInput>();

/**
 * Refuses a member without `recipients.read` an endpoint that would receive full phone numbers:
 * the console masks them for that member, so a webhook must not hand them over either. Read
 * with the membership locked until the change commits, so a concurrent revocation waits.
 */
async function checkRecipientsAccess(
  tx: TransactionSql,
  workspaceId: number,
  actor: Actor,
  events: readonly WebhookEventType[],
): Promise<void> {
  // The operator's CLI answers to no member (docs/webhooks.md).
  if (actor.kind !== 'member') return;
  const by: ActingMember = { userId: actor.userId };
  const carrying = events.filter((type) => RECIPIENT_EVENT_TYPES.includes(type));
  if (carrying.length === 0) return;
  const member = await findMemberStanding(tx, workspaceId, by.userId, 'share');
  if (member?.status === 'active' && member.permissions.includes('recipients.read')) return;
  const [what, them] =
    carrying.length === 1
      ? [`${carrying[0]} carries`, 'it']
      : [`${carrying.join(', ')} carry`, 'them'];
  throw new InputError('forbidden', [
    `${what} recipients' full phone numbers: subscribing to ${them} needs the recipients.read permission in this workspace.`,
  ]);
}

/** Known event types, each once, in the catalogue's order. */
function eventTypes(given: string[] | undefined): WebhookEventType[] {
  if (given === undefined) throw invalid`${field('events')} is required`;
  const items = given.map((item) => item.trim()).filter(Boolean);
  if (items.length === 1 && items[0] === 'all') return [...WEBHOOK_EVENT_TYPES];
  if (items.length === 0) throw invalid`${field('events')} must list at least one event`;
  const unknown = items.find((item) => !isWebhookEventType(item));
  if (unknown !== undefined)
    throw invalid`Unknown webhook event "${unknown}"; events are ${WEBHOOK_EVENT_TYPES.join(', ')}, or all`;
  return WEBHOOK_EVENT_TYPES.filter((type) => items.includes(type));
}

async function endpointUrl(deps: WebhookDeps, given: string | undefined): Promise<string> {
  const raw = requiredText(given, field('url'));
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid`${field('url')} "${raw}" is not an http(s) URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid`${field('url')} "${raw}" is not an http(s) URL`;
  if (url.username !== '' || url.password !== '')
    throw invalid`${field('url')} must not contain a user name or password`;
  if (url.href.length > MAX_URL_LENGTH)
    throw invalid`${field('url')} must be at most ${MAX_URL_LENGTH} characters`;
  try {
    await resolveWebhookTarget(url, {
      allowPrivate: deps.env.WEBHOOK_ALLOW_PRIVATE_URLS,
      resolver: deps.webhookResolver,
    });
  } catch (error) {
    if (!(error instanceof UnsafeUrlError)) throw error;
    throw error.nonPublic
      ? invalid`${field('url')} refused: ${error.message}; webhooks go only to public addresses (WEBHOOK_ALLOW_PRIVATE_URLS=true allows private ones)`
      : invalid`${field('url')} refused: ${error.message}`;
  }
  return url.href;
}

/** Tests substitute the resolver to simulate DNS answers. */
export type WebhookDeps = Pick<CommandDeps, 'sql' | 'secret' | 'env'> & {
  webhookResolver?: HostResolver;
};

export async function createWebhookEndpoint(
  deps: WebhookDeps,
  input: CreateWebhookEndpointInput,
  actor: Actor,
): Promise<{ endpoint: WebhookEndpoint; secret: string; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  // Every rule is checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  const events = checks.check(() => eventTypes(input.events)) ?? [];
  const description = optionalText(input.description) ?? null;
  if (description !== null && description.length > MAX_DESCRIPTION_LENGTH)
    checks.check(() => {
      throw invalid`${field('description')} must be at most ${MAX_DESCRIPTION_LENGTH} characters`;
    });
  const url = (await checks.checkAsync(() => endpointUrl(deps, input.url))) ?? '';
  checks.done();
  // Stored encrypted; the caller shows it this once.
  const secret = generateWebhookSecret();
  const endpoint = await deps.sql.begin(async (tx) => {
    await checkRecipientsAccess(tx, workspace.id, actor, events);
    const id = await reserveWebhookEndpointId(tx);
    const created = await insertWebhookEndpoint(tx, {
      id,
      workspaceId: workspace.id,
      url,
      description,
      events,
      secret: encryptCredentials(deps.secret, webhookSecretContext(workspace.id, id), secret),
    });
    await writeAudit(tx, actor, workspace.id, {
      action: 'webhook.created',
      target: `webhook ${created.url}`,
      details: { events: created.events.join(',') },
    });
    return created;
  });
  return { endpoint, secret, workspace };
}

/** The workspace's endpoints (never their secrets). */
export async function listWorkspaceWebhookEndpoints(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<{ endpoints: WebhookEndpoint[]; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  return { endpoints: await listWebhookEndpoints(deps.sql, workspace.id), workspace };
}

const noEndpoint = (id: number) => notFound`No webhook endpoint has the id ${id}`;

/**
 * Takes new events again (earlier ones are not replayed). A member enabling one that carries phone
 * numbers needs recipients.read, as creating it does.
 */
export async function enableWebhookEndpoint(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number },
  actor: Actor,
): Promise<WebhookEndpoint> {
  return deps.sql.begin(async (tx) => {
    const found = await findWebhookEndpoint(tx, input.id);
    if (!found) throw noEndpoint(input.id);
    await checkRecipientsAccess(tx, found.workspaceId, actor, found.events);
    const endpoint = (await setWebhookEndpointEnabled(tx, input.id, true, null)) as WebhookEndpoint;
    await writeAudit(tx, actor, found.workspaceId, endpointLine('webhook.enabled', found));
    return endpoint;
  });
}

/** No new events; deliveries in flight stop at their next attempt. */
export async function disableWebhookEndpoint(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number },
  actor: Actor,
): Promise<WebhookEndpoint> {
  return deps.sql.begin(async (tx) => {
    const endpoint = await setWebhookEndpointEnabled(
      tx,
      input.id,
      false,
      'Disabled by an operator',
    );
    if (!endpoint) throw noEndpoint(input.id);
    await writeAudit(tx, actor, endpoint.workspaceId, endpointLine('webhook.disabled', endpoint));
    return endpoint;
  });
}

/** Its attempts log goes with it. */
export async function deleteWebhookEndpoint(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number },
  actor: Actor,
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const endpoint = await findWebhookEndpoint(tx, input.id);
    if (!endpoint || !(await deleteWebhookEndpointRow(tx, input.id))) throw noEndpoint(input.id);
    await writeAudit(tx, actor, endpoint.workspaceId, endpointLine('webhook.deleted', endpoint));
  });
}

/** The audit line of a change to an endpoint, named by its URL as the Audit page always has. */
function endpointLine(
  action: string,
  endpoint: WebhookEndpoint,
  details: AuditLine['details'] = {},
): AuditLine {
  return { action, target: `webhook ${endpoint.url}`, details };
}

export interface WebhookAttemptsInput {
  /** The endpoint's. */
  id: number;
  /** 1 to 1000; 50 when not given. */
  limit?: number;
}

/** The endpoint's delivery log, newest first. */
export async function listWebhookEndpointAttempts(
  deps: Pick<CommandDeps, 'sql'>,
  input: WebhookAttemptsInput,
): Promise<{ endpoint: WebhookEndpoint; attempts: WebhookAttempt[] }> {
  const limit = input.limit ?? ATTEMPTS_LIMIT.default;
  if (!Number.isInteger(limit) || limit < ATTEMPTS_LIMIT.min || limit > ATTEMPTS_LIMIT.max)
    throw invalid`${fieldsOf<WebhookAttemptsInput>()('limit')} must be a whole number from ${ATTEMPTS_LIMIT.min} to ${ATTEMPTS_LIMIT.max}`;
  const endpoint = await findWebhookEndpoint(deps.sql, input.id);
  if (!endpoint) throw noEndpoint(input.id);
  return { endpoint, attempts: await listWebhookAttempts(deps.sql, input.id, limit) };
}
