/**
 * Webhook tools: a test event through the normal delivery path, the signing secret rotated with
 * an overlap window (both secrets sign meanwhile), a failed delivery replayed, a sample body
 * per event type.
 */
import {
  findReplayableEvent,
  findWebhookEndpoint,
  findWebhookSecretOverlap,
  insertTestWebhookEvent,
  insertWebhookReplay,
  rotateWebhookEndpointSecret,
  type WebhookEndpoint,
} from '../../db/webhooks.js';
import { WEBHOOK_SAMPLE_DATA, webhookBody } from '../../domain/webhook-samples.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/webhooks.js';
import { encryptCredentials } from '../../security/credentials.js';
import { generateWebhookSecret, webhookSecretContext } from '../../security/webhook-signature.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { conflict, fieldsOf, invalid, notFound } from '../input.js';

/** The overlap a rotation offers by default, and its longest. */
export const DEFAULT_OVERLAP_HOURS = 24;
const MAX_OVERLAP_HOURS = 7 * 24;

const noEndpoint = (id: number) => notFound`No webhook endpoint has the id ${id}`;
const target = (endpoint: WebhookEndpoint) => `webhook ${endpoint.url}`;

export interface RotateWebhookSecretInput {
  id: number;
  /** 0 to 168: how long the old secret keeps signing beside the new one; 24 when not given. */
  overlapHours?: number;
}

/**
 * A new signing secret, returned this once. During the overlap every delivery carries a
 * signature by each secret, so a receiver may switch to the new one at any time within it.
 */
export async function rotateWebhookSecret(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: RotateWebhookSecretInput,
  actor: Actor,
): Promise<{ endpoint: WebhookEndpoint; secret: string; previousUntil: Date | null }> {
  const hours = input.overlapHours ?? DEFAULT_OVERLAP_HOURS;
  if (!Number.isInteger(hours) || hours < 0 || hours > MAX_OVERLAP_HOURS)
    throw invalid`${fieldsOf<RotateWebhookSecretInput>()('overlapHours')} must be a whole number of hours from 0 to ${MAX_OVERLAP_HOURS}`;
  const secret = generateWebhookSecret();
  return deps.sql.begin(async (tx) => {
    const found = await findWebhookEndpoint(tx, input.id);
    if (!found) throw noEndpoint(input.id);
    const previousUntil = hours === 0 ? null : new Date(Date.now() + hours * 3_600_000);
    const endpoint = (await rotateWebhookEndpointSecret(tx, {
      id: found.id,
      secret: encryptCredentials(
        deps.secret,
        webhookSecretContext(found.workspaceId, found.id),
        secret,
      ),
      previousUntil,
    })) as WebhookEndpoint;
    await writeAudit(tx, actor, found.workspaceId, {
      action: 'webhook.secret_rotated',
      target: target(found),
      details: { overlap_hours: hours },
    });
    return { endpoint, secret, previousUntil };
  });
}

/**
 * A test event to one endpoint: the sample data of one of its event types, marked `"test": true`,
 * delivered (and retried, and logged in its attempts) as any event is.
 */
export async function sendTestWebhookEvent(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number; type?: string },
  actor: Actor,
): Promise<{ eventId: string; type: WebhookEventType }> {
  return deps.sql.begin(async (tx) => {
    const endpoint = await findWebhookEndpoint(tx, input.id);
    if (!endpoint) throw noEndpoint(input.id);
    if (!endpoint.enabled) throw conflict`The endpoint is disabled: enable it to send a test event`;
    const type = (input.type || endpoint.events[0]) as WebhookEventType;
    if (!endpoint.events.includes(type))
      throw invalid`${fieldsOf<{ type: string }>()('type')} must be one of the endpoint's events: ${endpoint.events.join(', ')}`;
    const eventId = await insertTestWebhookEvent(tx, {
      workspaceId: endpoint.workspaceId,
      endpointId: endpoint.id,
      type,
      data: WEBHOOK_SAMPLE_DATA[type],
    });
    await writeAudit(tx, actor, endpoint.workspaceId, {
      action: 'webhook.test_sent',
      target: target(endpoint),
      details: { type, event_id: eventId },
    });
    return { eventId, type };
  });
}

export interface ReplayWebhookInput {
  id: number;
  /** The `msg_…` id of the event to deliver again. */
  eventId: string;
  /** One per click (or command run): asking again with it replays nothing more. */
  key: string;
}

/**
 * Delivers an event this endpoint did not take again: the same body and webhook-id, through the
 * normal path. Once per key; `created` is false when the key had replayed it already.
 */
export async function replayWebhookEvent(
  deps: Pick<CommandDeps, 'sql'>,
  input: ReplayWebhookInput,
  actor: Actor,
): Promise<{ eventId: string; created: boolean }> {
  if (!/^[A-Za-z0-9_-]{8,64}$/.test(input.key))
    throw invalid`${fieldsOf<ReplayWebhookInput>()('key')} must be 8 to 64 letters, digits, - or _`;
  return deps.sql.begin(async (tx) => {
    const endpoint = await findWebhookEndpoint(tx, input.id);
    if (!endpoint) throw noEndpoint(input.id);
    const event = await findReplayableEvent(tx, endpoint.id, input.eventId);
    if (!event?.attempted)
      throw notFound`This endpoint has no delivery of the event ${input.eventId}`;
    if (event.delivered)
      throw conflict`The event ${input.eventId} was delivered to this endpoint already`;
    if (!endpoint.enabled) throw conflict`The endpoint is disabled: enable it to replay a delivery`;
    const replay = await insertWebhookReplay(tx, {
      originalId: event.id,
      endpointId: endpoint.id,
      key: input.key,
    });
    if (replay.created)
      await writeAudit(tx, actor, endpoint.workspaceId, {
        action: 'webhook.replayed',
        target: target(endpoint),
        details: { type: event.type, event_id: event.eventId, replay_event_id: replay.eventId },
      });
    return replay;
  });
}

/** Each event type's sample body, exactly as a delivery of it is written (pretty-printed). */
export function webhookSamples(): { type: WebhookEventType; body: string }[] {
  const at = new Date('2026-11-27T09:30:05.000Z');
  return WEBHOOK_EVENT_TYPES.map((type) => ({
    type,
    body: JSON.stringify(
      JSON.parse(webhookBody({ type, createdAt: at, data: WEBHOOK_SAMPLE_DATA[type] })),
      null,
      2,
    ),
  }));
}

/** Until when a rotated-out secret still signs the endpoint's deliveries; null when none does. */
export function webhookSecretOverlap(deps: Pick<CommandDeps, 'sql'>, id: number) {
  return findWebhookSecretOverlap(deps.sql, id);
}
