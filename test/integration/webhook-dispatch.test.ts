/**
 * The outbox dispatcher of the shared worker (server/webhook-dispatcher.ts) when things go
 * wrong: a dispatcher that died after starting a workflow but before marking its event, and one
 * that died holding its batch's row locks. Nothing accepted is lost and nothing goes out twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { webhookCreate } from '../../cli/commands/webhooks.js';
import { searchAttributes, TASK_QUEUE, webhookWorkflowId } from '../../workflows/definitions.js';
import type { webhookWorkflow } from '../../workflows/webhook.js';
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

/** An outbox row as the triggers write it (dispatched or not), without a notification. */
async function insertEvent(tenant: Tenant, endpointId: number, dispatched: boolean) {
  const [row] = await stack.sql<OutboxRow[]>`
    insert into webhook_events (workspace_id, type, data, endpoint_ids, dispatched_at)
    values (${tenant.workspaceId}, 'otp.verified', ${stack.sql.json({ request_id: 'test' })},
      ${[endpointId]}::bigint[], ${dispatched ? new Date() : null})
    returning id, event_id, dispatched_at`;
  return row as OutboxRow;
}

async function outboxRow(id: number): Promise<OutboxRow> {
  const [row] = await stack.sql<OutboxRow[]>`
    select id, event_id, dispatched_at from webhook_events where id = ${id}`;
  return row as OutboxRow;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the webhook dispatcher', () => {
  it('treats a start repeated after a crash as done: one delivery, event marked', async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/restarted/${tenant.slug}`;
    const endpointId = await endpointFor(tenant, path);
    // A dispatcher started the workflow, then died before marking the event dispatched.
    const event = await insertEvent(tenant, endpointId, true);
    await stack.temporal.workflow.start<typeof webhookWorkflow>('webhookWorkflow', {
      workflowId: webhookWorkflowId(tenant.workspaceId, event.eventId, endpointId),
      taskQueue: TASK_QUEUE,
      args: [{ workspaceId: tenant.workspaceId, eventId: event.eventId, endpointId }],
      typedSearchAttributes: [
        { key: searchAttributes.workspaceId, value: String(tenant.workspaceId) },
        { key: searchAttributes.kind, value: 'webhook' },
      ],
    });
    await stack.sql`update webhook_events set dispatched_at = null where id = ${event.id}`;

    // The next round (poll) starts it again under the same id: a no-op, then marks it.
    await expect
      .poll(async () => (await outboxRow(event.id)).dispatchedAt, { timeout: 15_000 })
      .toBeInstanceOf(Date);
    await receiver.waitFor(path, 1);
    await pause(1500);
    expect(receiver.at(path)).toHaveLength(1);
    expect(receiver.at(path)[0]?.headers['webhook-id']).toBe(event.eventId);
  });

  it('skips events another dispatcher holds, and dispatches them once it dies', async () => {
    const tenant = await createTenant(stack.admin);
    const held = `/held/${tenant.slug}`;
    const free = `/free/${tenant.slug}`;
    const heldEndpoint = await endpointFor(tenant, held);
    const freeEndpoint = await endpointFor(tenant, free);

    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: (event: OutboxRow) => void = () => {};
    const lockedEvent = new Promise<OutboxRow>((resolve) => {
      locked = resolve;
    });
    // Another dispatcher's batch: it locks an undispatched event, then dies mid-batch.
    const holder = stack.sql
      .begin(async (tx) => {
        for (let tries = 0; tries < 5; tries++) {
          const event = await insertEvent(tenant, heldEndpoint, false);
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
    const heldEvent = await lockedEvent;

    // Meanwhile a new event, announced: the shared dispatcher takes it and skips the held one.
    const freeEvent = await insertEvent(tenant, freeEndpoint, false);
    await stack.sql`select pg_notify('herald_webhook_events', '')`;
    const [delivered] = await receiver.waitFor(free, 1);
    expect(delivered?.headers['webhook-id']).toBe(freeEvent.eventId);
    expect((await outboxRow(freeEvent.id)).dispatchedAt).toBeInstanceOf(Date);
    expect((await outboxRow(heldEvent.id)).dispatchedAt).toBeNull();
    expect(receiver.at(held)).toHaveLength(0);

    // The holder dies (its transaction rolls back): the event is still there, and goes out once.
    release();
    expect(await holder).toBe('the dispatcher died');
    const [late] = await receiver.waitFor(held, 1, 15_000);
    expect(late?.headers['webhook-id']).toBe(heldEvent.eventId);
    expect((await outboxRow(heldEvent.id)).dispatchedAt).toBeInstanceOf(Date);
    await pause(1500);
    expect(receiver.at(held)).toHaveLength(1);
    expect(receiver.at(free)).toHaveLength(1);
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
