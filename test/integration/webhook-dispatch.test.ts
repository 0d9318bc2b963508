/**
 * The outbox dispatcher of the shared worker (server/webhook-dispatcher.ts) when things go
 * wrong: a dispatcher that died after handing an event over but before marking it, and one that
 * died holding its batch's row locks, also with a later event of the same message waiting. Nothing
 * accepted is lost, nothing goes out twice, and a message's events go out in order.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import { startWebhookWorkflow } from '../../temporal/workflow-starts.js';
import { webhookLaneWorkflowId } from '../../workflows/definitions.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let stack: Stack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  stack = await openStack();
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await stack?.close();
});

async function endpointFor(tenant: Tenant, path: string): Promise<number> {
  const context = { ...stack.admin, env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true } };
  const created = await webhookCreate(context, {
    workspace: tenant.slug,
    url: `${receiver.url}${path}`,
    events: 'all',
  });
  return created.json.id as number;
}

interface OutboxRow {
  id: number;
  eventId: string;
  dispatchedAt: Date | null;
}

/** What an event is about: an OTP request of its own unless a test says otherwise. */
interface Subject {
  type: string;
  data: Record<string, unknown>;
}
const anOtpRequest = (): Subject => ({ type: 'otp.verified', data: { request_id: randomUUID() } });

/** An outbox row as the triggers write it (dispatched or not), without a notification. */
async function insertEvent(
  tenant: Tenant,
  endpointId: number,
  dispatched: boolean,
  subject: Subject = anOtpRequest(),
) {
  const [row] = await stack.sql<OutboxRow[]>`
    insert into webhook_events (workspace_id, type, data, endpoint_ids, dispatched_at)
    values (${tenant.workspaceId}, ${subject.type}, ${stack.sql.json(subject.data as never)},
      ${[endpointId]}::bigint[], ${dispatched ? new Date() : null})
    returning id, event_id, dispatched_at`;
  return row as OutboxRow;
}

/**
 * Another dispatcher's batch: it locks a new undispatched event, then dies (rolls back) when
 * `release` is called. `locked` resolves with the event once it holds it.
 */
function holdEvent(tenant: Tenant, endpointId: number, subject?: Subject) {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked: (event: OutboxRow) => void = () => {};
  const lockedEvent = new Promise<OutboxRow>((resolve) => {
    locked = resolve;
  });
  const died = stack.sql
    .begin(async (tx) => {
      for (let tries = 0; tries < 5; tries++) {
        const event = await insertEvent(tenant, endpointId, false, subject);
        // Taken by a dispatcher between the insert and here: try again with a new one.
        const [row] = await tx`
          select id from webhook_events where id = ${event.id} and dispatched_at is null
          for update`;
        if (!row) continue;
        locked(event);
        await released;
        throw new Error('the dispatcher died');
      }
      throw new Error('could not lock an event before a dispatcher took it');
    })
    .catch((error: Error) => error.message);
  return { lockedEvent, release, died };
}

async function outboxRow(id: number): Promise<OutboxRow> {
  const [row] = await stack.sql<OutboxRow[]>`
    select id, event_id, dispatched_at from webhook_events where id = ${id}`;
  return row as OutboxRow;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the webhook dispatcher', () => {
  it('delivers an event handed over again after its run ended only once', async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/restarted/${tenant.slug}`;
    const endpointId = await endpointFor(tenant, path);
    // A dispatcher handed the event over, then died before marking it dispatched.
    const requestId = randomUUID();
    const subject = { type: 'otp.verified', data: { request_id: requestId } };
    const event = await insertEvent(tenant, endpointId, true, subject);
    const lane = {
      workspaceId: tenant.workspaceId,
      eventId: event.eventId,
      type: subject.type,
      subject: `otp-${requestId}`,
    };
    await startWebhookWorkflow(stack.temporal, lane, endpointId);
    const run = stack.temporal.workflow.getHandle(
      webhookLaneWorkflowId(tenant.workspaceId, lane.subject, endpointId),
    );
    expect(await run.result()).toBe('delivered');
    const { runId: firstRun } = await run.describe();
    await receiver.waitFor(path, 1);
    await stack.sql`update webhook_events set dispatched_at = null where id = ${event.id}`;

    // The next round (poll) hands it over again: a new run of the lane, which finds it delivered.
    await expect
      .poll(async () => (await outboxRow(event.id)).dispatchedAt, { timeout: 15_000 })
      .toBeInstanceOf(Date);
    await expect
      .poll(async () => {
        const latest = await run.describe();
        return latest.runId !== firstRun && latest.status.name;
      })
      .toBe('COMPLETED');
    expect(await stack.temporal.workflow.getHandle(run.workflowId).result()).toBe('delivered');
    await pause(1000);
    expect(receiver.at(path)).toHaveLength(1);
    expect(receiver.at(path)[0]?.headers['webhook-id']).toBe(event.eventId);
  });

  it('skips events another dispatcher holds, and dispatches them once it dies', async () => {
    const tenant = await createTenant(stack.admin);
    const held = `/held/${tenant.slug}`;
    const free = `/free/${tenant.slug}`;
    const heldEndpoint = await endpointFor(tenant, held);
    const freeEndpoint = await endpointFor(tenant, free);

    const holder = holdEvent(tenant, heldEndpoint);
    const heldEvent = await holder.lockedEvent;

    // Meanwhile a new event, announced: the shared dispatcher takes it and skips the held one.
    const freeEvent = await insertEvent(tenant, freeEndpoint, false);
    await stack.sql`select pg_notify('herald_webhook_events', '')`;
    const [delivered] = await receiver.waitFor(free, 1);
    expect(delivered?.headers['webhook-id']).toBe(freeEvent.eventId);
    expect((await outboxRow(freeEvent.id)).dispatchedAt).toBeInstanceOf(Date);
    expect((await outboxRow(heldEvent.id)).dispatchedAt).toBeNull();
    expect(receiver.at(held)).toHaveLength(0);

    // The holder dies (its transaction rolls back): the event is still there, and goes out once.
    holder.release();
    expect(await holder.died).toBe('the dispatcher died');
    const [late] = await receiver.waitFor(held, 1, 15_000);
    expect(late?.headers['webhook-id']).toBe(heldEvent.eventId);
    expect((await outboxRow(heldEvent.id)).dispatchedAt).toBeInstanceOf(Date);
    await pause(1500);
    expect(receiver.at(held)).toHaveLength(1);
    expect(receiver.at(free)).toHaveLength(1);
  });
});

describe('the order of a message’s events', () => {
  it('holds an event back while another dispatcher holds an earlier one of its message', async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/in-order/${tenant.slug}`;
    const endpointId = await endpointFor(tenant, path);
    const message = (type: string) => ({ type, data: { campaign_id: 1, message_seq: 1 } });
    const holder = holdEvent(tenant, endpointId, message('message.sent'));
    const sent = await holder.lockedEvent;

    // The receipt's event, announced: it waits for the message.sent the other dispatcher holds.
    const delivered = await insertEvent(tenant, endpointId, false, message('message.delivered'));
    await stack.sql`select pg_notify('herald_webhook_events', '')`;
    await pause(1500);
    expect((await outboxRow(delivered.id)).dispatchedAt).toBeNull();
    expect(receiver.at(path)).toHaveLength(0);

    // The holder dies: both go out, message.sent first.
    holder.release();
    expect(await holder.died).toBe('the dispatcher died');
    const requests = await receiver.waitFor(path, 2, 15_000);
    expect(requests.map((request) => request.headers['webhook-id'])).toEqual([
      sent.eventId,
      delivered.eventId,
    ]);
    expect((await outboxRow(delivered.id)).dispatchedAt).toBeInstanceOf(Date);
  });
});

describe('retention (daily maintenance)', () => {
  it('deletes events dispatched over 30 days ago with their attempts, and nothing newer or undispatched', async () => {
    const tenant = await createTenant(stack.admin);
    const endpointId = await endpointFor(tenant, '/retention');
    const [old, recent, pending] = [
      await insertEvent(tenant, endpointId, true),
      await insertEvent(tenant, endpointId, true),
      await insertEvent(tenant, endpointId, false),
    ];
    await stack.sql`
      update webhook_events set created_at = now() - interval '40 days',
        dispatched_at = case when id = ${old.id} then now() - interval '31 days' end
      where id in (${old.id}, ${pending.id})`;
    await stack.sql`
      insert into webhook_attempts (endpoint_id, event_id, attempt, attempted_at, duration_ms,
        status_code, succeeded)
      values (${endpointId}, ${old.id}, 1, now() - interval '31 days', 12, 200, true)`;
    await stack.sql`
      insert into provider_send_slots (provider_key, next_slot_at)
      values (${`idle-${tenant.workspaceId}`}, now() - interval '2 days'),
             (${`busy-${tenant.workspaceId}`}, now())`;

    const maintenance = createMaintenanceActivities({ sql: stack.sql });
    expect(await maintenance.deleteOldWebhookEvents({ batchSize: 5000 })).toBeGreaterThanOrEqual(1);
    expect(await maintenance.deleteIdleSendSlots()).toBeGreaterThanOrEqual(1);

    const left = await stack.sql<{ id: number }[]>`
      select id from webhook_events where id in (${old.id}, ${recent.id}, ${pending.id}) order by id`;
    expect(left.map((row) => row.id)).toEqual([recent.id, pending.id]);
    expect(await stack.sql`select 1 from webhook_attempts where event_id = ${old.id}`).toHaveLength(
      0,
    );
    const slots = await stack.sql<{ providerKey: string }[]>`
      select provider_key from provider_send_slots where provider_key like ${`%-${tenant.workspaceId}`}`;
    expect(slots.map((row) => row.providerKey)).toEqual([`busy-${tenant.workspaceId}`]);
  });
});
