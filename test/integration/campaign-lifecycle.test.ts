/**
 * A campaign's lifecycle beyond docs/spec.md §4.1 on the real stack (issue 27): `send_at` schedules it
 * on a durable timer, POST /messages/{id}/cancel stops it (scheduled or sending), counted at the
 * simulator's inbox.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { campaignCancel, campaignCreate } from '../../cli/admin/campaigns.js';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import { dispatchCampaign } from '../../commands/messaging/dispatch-campaign.js';
import { parseEnv } from '../../config/env.js';
import { dropCampaignPersonalData } from '../../db/retention.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import {
  dispatchPrepared,
  inbox,
  invalid,
  lookup,
  numbers,
  postMessages,
  saveDirectCampaign,
  simulatorProvider,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WINDOW = 'The send at field must be a date between 1 minute and 35 days from now.';
const FORMAT = 'The send at field must be a valid ISO 8601 date and time with a time zone offset.';

let stack: Stack;
let tenant: Tenant;
const simulators: RunningSimulator[] = [];

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
});

afterAll(async () => {
  await Promise.all(simulators.map((simulator) => simulator.close()));
  await stack.close();
});

function cancel(id: number | string, token = tenant.token) {
  return stack.app.inject({
    method: 'POST',
    url: `/api/v1/messages/${id}/cancel`,
    headers: { authorization: `Bearer ${token}` },
  });
}

/** Every message the dedicated simulator received. */
async function received(simulator: RunningSimulator): Promise<string[]> {
  const response = await fetch(`${simulator.url}/v1/inbox`);
  return ((await response.json()) as { messages: { to: string }[] }).messages.map((m) => m.to);
}

const inAMinute = (extraMs = 0) => new Date(Date.now() + 60_000 + 5_000 + extraMs);

describe('send_at', () => {
  it('refuses a time that is not ISO 8601 with an offset, too soon or too far', async () => {
    const base = { recipients: numbers(1), message: 'Later' };
    for (const [sendAt, message] of [
      ['2026-12-01T10:00:00', FORMAT],
      ['tomorrow', FORMAT],
      [new Date(Date.now() + 30_000).toISOString(), WINDOW],
      [new Date(Date.now() - 3_600_000).toISOString(), WINDOW],
      [new Date(Date.now() + 36 * 86_400_000).toISOString(), WINDOW],
    ] as const) {
      const response = await postMessages(stack, tenant.token, { ...base, send_at: sendAt });
      expect({ sendAt, status: response.statusCode, body: response.json() }).toEqual({
        sendAt,
        status: 422,
        body: invalid('send_at', message),
      });
    }
    const [row] = await stack.sql<{ count: number }[]>`
      select count(*)::int from campaigns where workspace_id = ${tenant.workspaceId}`;
    expect(row?.count).toBe(0);
  });

  it('answers scheduled, shows scheduled until its time, and counts validity from it', async () => {
    const at = inAMinute(10 * 60_000);
    // The same instant written in UTC+10.
    const local = `${new Date(at.getTime() + 10 * 3_600_000).toISOString().slice(0, 19)}+10:00`;
    const recipients = numbers(2);
    const response = await postMessages(stack, tenant.token, {
      recipients,
      message: 'Your appointment is tomorrow.',
      send_at: local,
    });
    expect(response.statusCode).toBe(202);
    const scheduledAt = new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString();
    expect(response.json()).toEqual({
      message: 'Messages scheduled for sending.',
      data: {
        message: {
          id: expect.any(Number),
          reference: null,
          status: 'scheduled',
          total_recipients: 2,
          queued_count: 2,
          sent_count: 0,
          failed_count: 0,
          canceled_count: 0,
          delivered_count: 0,
          undelivered_count: 0,
          created_at: expect.stringMatching(ISO),
          scheduled_at: scheduledAt,
          completed_at: null,
        },
        queue: {
          success: true,
          campaign_id: expect.any(Number),
          batch_id: expect.stringMatching(UUID),
          total_recipients: 2,
          requested_recipients: 2,
          excluded_recipients: 0,
          message: `2 messages scheduled for ${scheduledAt}.`,
        },
      },
    });
    const id = response.json().data.message.id as number;
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      status: 'scheduled',
      queued_count: 2,
      scheduled_at: scheduledAt,
    });
    const [row] = await stack.sql<{ validFor: number }[]>`
      select extract(epoch from valid_until - scheduled_at)::int as valid_for
      from campaigns where id = ${id}`;
    expect(row?.validFor).toBe(24 * 3600);
    expect(await inbox(simulatorUrl, recipients[0] as string)).toEqual([]);
    // Canceled, so the shared worker does not send it in ten minutes.
    expect((await cancel(id)).statusCode).toBe(200);
  });

  it('sends a scheduled campaign once its timer fires, not before', async () => {
    const recipients = numbers(3);
    const sendAt = new Date(Date.now() + 4_000);
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      { body: 'On time', providerSlug: 'own', recipients, sendAt },
      async () => {},
    );
    expect((await lookup(stack, tenant.token, id)).status).toBe('scheduled');
    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).status, {
        timeout: 20_000,
        interval: 100,
      })
      .toBe('completed');
    const first = await inbox(simulatorUrl, recipients[0] as string);
    expect(first).toHaveLength(1);
    expect(Date.parse(first[0]?.received_at as string)).toBeGreaterThanOrEqual(sendAt.getTime());
    for (const to of recipients) expect(await inbox(simulatorUrl, to)).toHaveLength(1);
  });
});

describe('the OpenAPI document', () => {
  it('describes send_at with an example, and the cancel answer with one', async () => {
    const document = (await stack.app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(
      document.paths['/api/v1/messages'].post.requestBody.content['application/json'].schema
        .properties.send_at,
    ).toEqual({
      description: expect.stringContaining('ISO 8601 with a time zone offset, 1 minute to 35 days'),
      anyOf: [
        { type: 'string', format: 'date-time', examples: ['2026-12-01T09:00:00+10:00'] },
        { type: 'null' },
      ],
    });
    const cancel = document.paths['/api/v1/messages/{campaign}/cancel'].post;
    expect(Object.keys(cancel.responses)).toEqual(
      expect.arrayContaining(['200', '401', '403', '404', '409']),
    );
    expect(cancel.responses['200'].content['application/json'].example.data.message).toMatchObject({
      status: 'canceled',
      canceled_count: 798,
    });
  });
});

describe('POST /api/v1/messages/{id}/cancel', () => {
  it('cancels a scheduled campaign: nothing is sent at its time, a second cancel answers the same', async () => {
    const recipients = numbers(3);
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      {
        body: 'Never',
        providerSlug: 'own',
        recipients,
        sendAt: new Date(Date.now() + 3_000),
      },
      async () => {},
    );
    const first = await cancel(id);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      data: {
        message: {
          id,
          reference: null,
          status: 'canceled',
          total_recipients: 3,
          queued_count: 0,
          sent_count: 0,
          failed_count: 0,
          canceled_count: 3,
          delivered_count: 0,
          undelivered_count: 0,
          created_at: expect.stringMatching(ISO),
          scheduled_at: expect.stringMatching(ISO),
          completed_at: expect.stringMatching(ISO),
        },
      },
    });
    const again = await cancel(id);
    expect({ status: again.statusCode, body: again.json() }).toEqual({
      status: 200,
      body: first.json(),
    });
    // Its run ends on the signal, not at its time.
    await expect
      .poll(
        async () =>
          (
            await stack.temporal.workflow
              .getHandle(`campaign/${tenant.workspaceId}/id-${id}`)
              .describe()
          ).status.name,
        { timeout: 10_000, interval: 100 },
      )
      .toBe('COMPLETED');
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    for (const to of recipients) expect(await inbox(simulatorUrl, to)).toEqual([]);
    expect((await lookup(stack, tenant.token, id)).status).toBe('canceled');
  });

  it('stops a sending campaign: only the messages already claimed still go, the counters add up', async () => {
    const paced = await simulatorProvider(stack, tenant.workspaceId, 'paced', {
      messagesPerSecond: 40,
    });
    simulators.push(paced);
    const endpoint = (
      await webhookCreate(
        { ...stack.admin, env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true } },
        { workspace: tenant.slug, url: 'http://127.0.0.1:9/hooks', events: 'campaign.canceled' },
      )
    ).json as { id: number };
    const total = 400;
    const response = await postMessages(stack, tenant.token, {
      recipients: numbers(total),
      message: 'Sale',
      provider_slug: 'paced',
    });
    expect(response.statusCode).toBe(202);
    const id = response.json().data.message.id as number;
    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).sent_count, {
        timeout: 30_000,
        interval: 50,
      })
      .toBeGreaterThanOrEqual(60);

    const answer = await cancel(id);
    expect(answer.statusCode).toBe(200);
    const atCancel = answer.json().data.message;
    const inboxAtAnswer = (await received(paced)).length;
    expect(atCancel).toMatchObject({ status: 'canceled', total_recipients: total });
    // Claimed then: at most one batch of 50 in each of the 4 lanes.
    expect(atCancel.queued_count).toBeLessThanOrEqual(200);
    expect(
      atCancel.sent_count + atCancel.failed_count + atCancel.canceled_count + atCancel.queued_count,
    ).toBe(total);

    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).queued_count, {
        timeout: 30_000,
        interval: 100,
      })
      .toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const settled = await lookup(stack, tenant.token, id);
    const sentTo = await received(paced);
    expect(settled).toMatchObject({
      status: 'canceled',
      queued_count: 0,
      failed_count: 0,
      completed_at: atCancel.completed_at,
    });
    expect(settled.sent_count + settled.canceled_count).toBe(total);
    // The inbox holds exactly the sent ones, each once, and no more than were claimed went after.
    expect(sentTo.length).toBe(settled.sent_count);
    expect(new Set(sentTo).size).toBe(sentTo.length);
    expect(sentTo.length - inboxAtAnswer).toBeLessThanOrEqual(atCancel.queued_count);
    expect(settled.sent_count).toBeLessThanOrEqual(atCancel.sent_count + atCancel.queued_count);

    const [event] = await stack.sql<{ data: Record<string, unknown>; endpointIds: number[] }[]>`
      select data, endpoint_ids from webhook_events
      where workspace_id = ${tenant.workspaceId} and type = 'campaign.canceled'
        and data->>'campaign_id' = ${String(id)}`;
    expect(event).toEqual({
      endpointIds: [endpoint.id],
      data: {
        campaign_id: id,
        reference: null,
        name: null,
        status: 'canceled',
        total_recipients: total,
        queued_count: atCancel.queued_count,
        sent_count: atCancel.sent_count,
        failed_count: atCancel.failed_count,
        canceled_count: atCancel.canceled_count,
        created_at: atCancel.created_at,
        scheduled_at: null,
        completed_at: atCancel.completed_at,
      },
    });
  });

  it('answers 30 cancels raced at once the same, and writes campaign.canceled once', async () => {
    const endpoint = (
      await webhookCreate(
        { ...stack.admin, env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true } },
        { workspace: tenant.slug, url: 'http://127.0.0.1:9/raced', events: 'campaign.canceled' },
      )
    ).json as { id: number };
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      { body: 'Raced', providerSlug: 'own', recipients: numbers(5), sendAt: inAMinute() },
      async () => {},
    );
    const answers = await Promise.all(Array.from({ length: 30 }, () => cancel(id)));
    expect(new Set(answers.map((answer) => answer.statusCode))).toEqual(new Set([200]));
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(answers[0]?.json().data.message).toMatchObject({
      status: 'canceled',
      canceled_count: 5,
    });
    const events = await stack.sql<{ endpointIds: number[] }[]>`
      select endpoint_ids from webhook_events
      where type = 'campaign.canceled' and data->>'campaign_id' = ${String(id)}`;
    // Once, to every endpoint of the workspace that takes it (an earlier test added one too).
    expect(events).toHaveLength(1);
    expect(events[0]?.endpointIds).toContain(endpoint.id);
  });

  it('keeps a paused campaign canceled when the sweeper dispatches it afterwards', async () => {
    const recipients = numbers(3);
    const id = await saveDirectCampaign(stack, tenant.workspaceId, {
      body: 'Paused, then canceled',
      providerSlug: 'own',
      recipients,
    });
    expect((await cancel(id)).json().data.message).toMatchObject({
      status: 'canceled',
      canceled_count: 3,
    });
    // What the paused-campaign sweeper (or a keyed retry) does next.
    const { confirmed, workflowId } = await dispatchCampaign(stack, {
      workspaceId: tenant.workspaceId,
      campaignId: id,
    });
    expect(confirmed).toBe(true);
    await stack.temporal.workflow.getHandle(workflowId).result();
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      status: 'canceled',
      sent_count: 0,
      canceled_count: 3,
    });
    for (const to of recipients) expect(await inbox(simulatorUrl, to)).toEqual([]);
  });

  it('leaves a canceled campaign to retention like a completed one', async () => {
    const recipients = numbers(2);
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      { body: 'Old news', providerSlug: 'own', recipients, sendAt: new Date(Date.now() + 60_000) },
      async () => {},
    );
    expect((await cancel(id)).statusCode).toBe(200);
    await stack.sql`
      update campaigns set created_at = created_at - interval '100 days' where id = ${id}`;
    await dropCampaignPersonalData(stack.sql, 90, 1_000);
    const rows = await stack.sql<{ recipient: string; body: string }[]>`
      select m.recipient, c.body from campaign_messages m join campaigns c on c.id = m.campaign_id
      where m.campaign_id = ${id} order by m.seq`;
    expect(rows).toEqual(
      recipients.map((number) => ({ recipient: `•••• ${number.slice(-4)}`, body: '' })),
    );
  });

  it('answers 409 for a completed campaign, 404 for another workspace or a malformed id', async () => {
    const response = await postMessages(stack, tenant.token, {
      recipients: numbers(1),
      message: 'Done already',
    });
    const id = response.json().data.message.id as number;
    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).status, { timeout: 30_000 })
      .toBe('completed');
    const completed = await cancel(id);
    expect({ status: completed.statusCode, body: completed.json() }).toEqual({
      status: 409,
      body: { message: `Campaign ${id} has already completed and cannot be canceled.` },
    });

    const other = await createTenant(stack.admin);
    for (const [target, token] of [
      [id, other.token],
      ['12abc', tenant.token],
    ] as const) {
      const answer = await cancel(target, token);
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toMatchObject({
        code: 'NOT-404',
        detail: `Campaign ${target} was not found.`,
      });
    }
    const reader = await tenant.keyWith(['messages:read']);
    expect((await cancel(id, reader.token)).statusCode).toBe(403);
    expect((await lookup(stack, tenant.token, id)).status).toBe('completed');
  });
});

describe('herald campaign create --send-at, herald campaign cancel', () => {
  it('schedules a named campaign, refuses a time too soon, and cancels it', async () => {
    const admin = {
      ...stack.admin,
      env: parseEnv({ LOG_LEVEL: 'silent', TEMPORAL_ADDRESS: inject('temporalAddress') }),
    };
    const base = {
      workspace: tenant.slug,
      name: 'Later',
      recipients: numbers(2).join(','),
      body: 'Hi',
    };
    await expect(
      campaignCreate(admin, { ...base, 'send-at': new Date(Date.now() + 10_000).toISOString() }),
    ).rejects.toThrow(`--send-at: ${WINDOW}`);

    const at = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000);
    const created = await campaignCreate(admin, { ...base, 'send-at': at.toISOString() });
    const { id } = created.json as { id: number };
    expect(created.json).toEqual({ id, status: 'scheduled', scheduled_at: at });
    expect(created.human).toMatch(
      new RegExp(
        `^Created campaign ${id} "Later" in ${tenant.slug}: scheduled for ${at.toISOString()} \\(workflow campaign/`,
      ),
    );

    const canceled = await campaignCancel(admin, { workspace: tenant.slug, id: String(id) });
    expect(canceled.json).toMatchObject({
      id,
      status: 'canceled',
      canceled_count: 2,
      queued_count: 0,
    });
    expect(canceled.human).toBe(
      `Campaign ${id} in ${tenant.slug} is canceled: 0 sent, 0 failed, 2 canceled`,
    );
    const again = await campaignCancel(admin, { workspace: tenant.slug, id: String(id) });
    expect(again.human).toBe(
      `Campaign ${id} in ${tenant.slug} was already canceled: 0 sent, 0 failed, 2 canceled`,
    );
  });
});
