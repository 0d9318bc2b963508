import type { WebhookEventType } from '../domain/webhooks.js';
import type { Sql, TransactionSql } from './client.js';

/** Webhook endpoints, the event outbox (filled by the triggers of 0007) and delivery attempts. */

export interface WebhookEndpoint {
  id: number;
  workspaceId: number;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  enabled: boolean;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

const ENDPOINT_COLUMNS = (sql: Sql | TransactionSql) =>
  sql`id, workspace_id, url, description, events, enabled, disabled_at, disabled_reason, created_at`;

/** The id the next endpoint gets, taken first so the secret's ciphertext can be bound to it. */
export async function reserveWebhookEndpointId(tx: TransactionSql): Promise<number> {
  const [row] = await tx<{ id: number }[]>`
    select nextval(pg_get_serial_sequence('webhook_endpoints', 'id')) as id`;
  return row?.id as number;
}

export async function insertWebhookEndpoint(
  tx: TransactionSql,
  input: {
    id: number;
    workspaceId: number;
    url: string;
    description: string | null;
    events: WebhookEventType[];
    secret: Buffer;
  },
): Promise<WebhookEndpoint> {
  const [endpoint] = await tx<WebhookEndpoint[]>`
    insert into webhook_endpoints (id, workspace_id, url, description, events, secret)
    values (${input.id}, ${input.workspaceId}, ${input.url}, ${input.description},
      ${input.events}::text[], ${input.secret})
    returning ${ENDPOINT_COLUMNS(tx)}`;
  return endpoint as WebhookEndpoint;
}

export function listWebhookEndpoints(sql: Sql, workspaceId: number) {
  return sql<WebhookEndpoint[]>`
    select ${ENDPOINT_COLUMNS(sql)} from webhook_endpoints
    where workspace_id = ${workspaceId} order by id`;
}

export async function findWebhookEndpoint(sql: Sql | TransactionSql, id: number) {
  const [endpoint] = await sql<WebhookEndpoint[]>`
    select ${ENDPOINT_COLUMNS(sql)} from webhook_endpoints where id = ${id}`;
  return endpoint;
}

/**
 * Enables (clearing why it was disabled) or disables an endpoint. Undefined when there is no
 * such endpoint.
 */
export async function setWebhookEndpointEnabled(
  sql: Sql | TransactionSql,
  id: number,
  enabled: boolean,
  reason: string | null,
): Promise<WebhookEndpoint | undefined> {
  const [endpoint] = await sql<WebhookEndpoint[]>`
    update webhook_endpoints set enabled = ${enabled},
      disabled_at = case when ${enabled}::boolean then null else coalesce(disabled_at, now()) end,
      disabled_reason = case when ${enabled}::boolean then null else ${reason} end
    where id = ${id}
    returning ${ENDPOINT_COLUMNS(sql)}`;
  return endpoint;
}

/** Disables an enabled endpoint whose retry schedule ran out; false when it was not enabled. */
export async function disableFailingWebhookEndpoint(
  sql: Sql,
  id: number,
  reason: string,
): Promise<boolean> {
  const result = await sql`
    update webhook_endpoints set enabled = false, disabled_at = now(), disabled_reason = ${reason}
    where id = ${id} and enabled`;
  return result.count > 0;
}

export async function deleteWebhookEndpoint(
  sql: Sql | TransactionSql,
  id: number,
): Promise<boolean> {
  const result = await sql`delete from webhook_endpoints where id = ${id}`;
  return result.count > 0;
}

export interface WebhookAttempt {
  eventId: string;
  type: WebhookEventType;
  attempt: number;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  nextAttemptAt: Date | null;
  /** A test event sent from the console or `webhook test`. */
  test: boolean;
  /** A replay of an earlier event (its body and webhook-id). */
  replay: boolean;
}

/** An endpoint's attempts, newest first. */
export function listWebhookAttempts(sql: Sql, endpointId: number, limit: number) {
  return sql<WebhookAttempt[]>`
    select e.event_id, e.type, a.attempt, a.attempted_at, a.duration_ms, a.status_code, a.error,
      a.succeeded, a.next_attempt_at, e.test, e.replay_of is not null as replay
    from webhook_attempts a join webhook_events e on e.id = a.event_id
    where a.endpoint_id = ${endpointId}
    order by a.attempted_at desc, a.id desc
    limit ${limit}`;
}

export interface WebhookDelivery {
  endpointId: number;
  workspaceId: number;
  url: string;
  /** AES-256-GCM ciphertext of the whsec_ secret. */
  secret: Uint8Array;
  /** The secret a rotation replaced, while its overlap lasts (it signs too); else null. */
  previousSecret: Uint8Array | null;
  enabled: boolean;
  eventRowId: number;
  eventId: string;
  /** The `webhook-id` sent: the event's, or for a replay its original's. */
  webhookId: string;
  test: boolean;
  type: WebhookEventType;
  /** The event's data object as JSON text. */
  data: string;
  createdAt: Date;
  /** The status of an attempt that already succeeded to this endpoint; null when none did. */
  deliveredStatus: number | null;
}

/**
 * What one attempt needs: the endpoint and the event. Undefined when either is gone. An event
 * handed over again (a dispatcher that died before marking it) says it already succeeded.
 */
export async function findWebhookDelivery(sql: Sql, eventId: string, endpointId: number) {
  const [delivery] = await sql<WebhookDelivery[]>`
    select w.id as endpoint_id, w.workspace_id, w.url, w.secret, w.enabled,
      case when w.previous_secret_until > now() then w.previous_secret end as previous_secret,
      e.id as event_row_id, e.event_id, e.type, e.data::text as data, e.created_at, e.test,
      coalesce((select o.event_id from webhook_events o where o.id = e.replay_of), e.event_id)
        as webhook_id,
      (select a.status_code from webhook_attempts a
       where a.endpoint_id = w.id and a.event_id = e.id and a.succeeded
       limit 1) as delivered_status
    from webhook_events e join webhook_endpoints w on w.id = ${endpointId}
    where e.event_id = ${eventId} and e.workspace_id = w.workspace_id`;
  return delivery;
}

/** Logs an attempt; a retried activity rewrites its attempt's row rather than adding one. */
export async function recordWebhookAttempt(
  sql: Sql,
  input: {
    endpointId: number;
    eventRowId: number;
    attempt: number;
    attemptedAt: Date;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    succeeded: boolean;
    nextAttemptAt: Date | null;
  },
): Promise<void> {
  await sql`
    insert into webhook_attempts (endpoint_id, event_id, attempt, attempted_at, duration_ms,
      status_code, error, succeeded, next_attempt_at)
    values (${input.endpointId}, ${input.eventRowId}, ${input.attempt}, ${input.attemptedAt},
      ${input.durationMs}, ${input.statusCode}, ${input.error}, ${input.succeeded},
      ${input.nextAttemptAt})
    on conflict (endpoint_id, event_id, attempt) do update set
      attempted_at = excluded.attempted_at, duration_ms = excluded.duration_ms,
      status_code = excluded.status_code, error = excluded.error,
      succeeded = excluded.succeeded, next_attempt_at = excluded.next_attempt_at`;
}

export interface UndispatchedEvent {
  id: number;
  eventId: string;
  workspaceId: number;
  type: WebhookEventType;
  /**
   * What the event is about — `message-<campaign>-<seq>`, `otp-<request>`, `campaign-<id>` —
   * whose events reach each endpoint in the order they happened.
   */
  subject: string;
  /** Subscribed endpoints that are still enabled. */
  endpointIds: number[];
  /**
   * An earlier event of the same subject is still undispatched in another dispatcher's hands:
   * this one must wait for it (it stays locked here, and is not to be marked).
   */
  waitsForEarlier: boolean;
}

/** The subject of the `webhook_events` row under `alias` (UndispatchedEvent.subject). */
function subjectOf(sql: TransactionSql, alias: string) {
  const row = sql(alias);
  // A test event or a replay is a lane of its own: it never waits behind its original's retries.
  return sql`case
    when ${row}.test or ${row}.replay_of is not null then 'event-' || ${row}.event_id
    when ${row}.type like 'message.%'
      then 'message-' || (${row}.data->>'campaign_id') || '-' || (${row}.data->>'message_seq')
    when ${row}.type = 'otp.range_blocked' then 'otp-range-' || (${row}.data->>'range')
    when ${row}.type like 'otp.%' then 'otp-' || (${row}.data->>'request_id')
    when ${row}.type like 'campaign.%' then 'campaign-' || (${row}.data->>'campaign_id')
    else 'event-' || ${row}.event_id end`;
}

/**
 * Locks the oldest undispatched events for the rest of the transaction, skipping those another
 * dispatcher holds, with the endpoints (still enabled) each goes to. An event whose subject has an
 * earlier undispatched event outside this batch (another dispatcher holds it) waits for it: the
 * earlier one is handed to Temporal first. Those undispatched rows are few (the batches in
 * flight), found through the partial index.
 */
export function lockUndispatchedEvents(tx: TransactionSql, limit: number) {
  return tx<UndispatchedEvent[]>`
    with locked as (
      select e.id, e.event_id, e.workspace_id, e.type, e.endpoint_ids,
        ${subjectOf(tx, 'e')} as subject
      from webhook_events e
      where e.dispatched_at is null
      order by e.id
      limit ${limit}
      for update skip locked
    )
    select l.id, l.event_id, l.workspace_id, l.type, l.subject,
      coalesce(array(
        select w.id from webhook_endpoints w
        where w.id = any(l.endpoint_ids) and w.enabled order by w.id
      ), '{}') as endpoint_ids,
      exists (
        select 1 from webhook_events p
        where p.dispatched_at is null and p.id < l.id and p.workspace_id = l.workspace_id
          and p.id not in (select id from locked)
          and ${subjectOf(tx, 'p')} = l.subject
      ) as waits_for_earlier
    from locked l order by l.id`;
}

export async function markEventsDispatched(tx: TransactionSql, ids: number[]): Promise<void> {
  await tx`update webhook_events set dispatched_at = now() where id = any(${ids}::bigint[])`;
}

/**
 * Deletes up to `limit` events dispatched more than `days` ago, with their attempts. Undispatched
 * events stay whatever their age: they have not been delivered yet.
 */
export async function deleteOldWebhookEvents(sql: Sql, days: number, limit: number) {
  const result = await sql`
    delete from webhook_events where id in (
      select id from webhook_events
      where dispatched_at < now() - make_interval(days => ${days})
      limit ${limit})`;
  return result.count;
}

/**
 * Replaces the signing secret. `previousUntil`: the old one keeps signing beside it until then
 * (a rotation during an overlap drops the oldest); null ends any overlap now.
 */
export async function rotateWebhookEndpointSecret(
  tx: TransactionSql,
  input: { id: number; secret: Buffer; previousUntil: Date | null },
): Promise<WebhookEndpoint | undefined> {
  const [endpoint] = await tx<WebhookEndpoint[]>`
    update webhook_endpoints set
      previous_secret = case when ${input.previousUntil}::timestamptz is null then null else secret end,
      previous_secret_until = ${input.previousUntil},
      secret = ${input.secret}
    where id = ${input.id}
    returning ${ENDPOINT_COLUMNS(tx)}`;
  return endpoint;
}

/** When the endpoint's previous secret stops signing; null when there is no overlap now. */
export async function findWebhookSecretOverlap(sql: Sql, id: number): Promise<Date | null> {
  const [row] = await sql<{ until: Date | null }[]>`
    select case when previous_secret_until > now() then previous_secret_until end as until
    from webhook_endpoints where id = ${id}`;
  return row?.until ?? null;
}

/** A test event for one endpoint, into the outbox (the dispatcher hands it over as any event). */
export async function insertTestWebhookEvent(
  tx: TransactionSql,
  input: { workspaceId: number; endpointId: number; type: WebhookEventType; data: object },
): Promise<string> {
  const [row] = await tx<{ eventId: string }[]>`
    insert into webhook_events (workspace_id, type, data, endpoint_ids, test)
    values (${input.workspaceId}, ${input.type}, ${tx.json(input.data as never)},
      ${[input.endpointId]}::bigint[], true)
    returning event_id`;
  await tx`select pg_notify('herald_webhook_events', '')`;
  return row?.eventId as string;
}

export interface ReplayableEvent {
  id: number;
  eventId: string;
  type: WebhookEventType;
  /** Whether an attempt of it to this endpoint succeeded. */
  delivered: boolean;
  /** Whether it was attempted at this endpoint at all. */
  attempted: boolean;
}

/** An event of the endpoint's workspace, with what its attempts to the endpoint came to. */
export async function findReplayableEvent(
  sql: Sql | TransactionSql,
  endpointId: number,
  eventId: string,
): Promise<ReplayableEvent | undefined> {
  const [row] = await sql<ReplayableEvent[]>`
    select e.id, e.event_id, e.type,
      exists (select 1 from webhook_attempts a
              where a.event_id = e.id and a.endpoint_id = w.id and a.succeeded) as delivered,
      exists (select 1 from webhook_attempts a
              where a.event_id = e.id and a.endpoint_id = w.id) as attempted
    from webhook_events e join webhook_endpoints w on w.id = ${endpointId}
    where e.event_id = ${eventId} and e.workspace_id = w.workspace_id`;
  return row;
}

/**
 * A replay of an event to one endpoint: its data, type, time and test mark, once per `key` (the
 * click that asked). Returns the replay's event id and whether this call made it.
 */
export async function insertWebhookReplay(
  tx: TransactionSql,
  input: { originalId: number; endpointId: number; key: string },
): Promise<{ eventId: string; created: boolean }> {
  const [made] = await tx<{ eventId: string }[]>`
    insert into webhook_events (workspace_id, type, data, endpoint_ids, created_at, test,
      replay_of, replay_key)
    select workspace_id, type, data, ${[input.endpointId]}::bigint[], created_at, test,
      id, ${input.key}
    from webhook_events where id = ${input.originalId}
    on conflict (replay_of, replay_key) where replay_of is not null do nothing
    returning event_id`;
  if (made) {
    await tx`select pg_notify('herald_webhook_events', '')`;
    return { eventId: made.eventId, created: true };
  }
  const [earlier] = await tx<{ eventId: string }[]>`
    select event_id from webhook_events
    where replay_of = ${input.originalId} and replay_key = ${input.key}`;
  return { eventId: earlier?.eventId as string, created: false };
}
