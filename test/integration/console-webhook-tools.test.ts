/**
 * Messaging → Opt-outs (search, filter, paging, masking, undo with its audit line) and the
 * Webhooks tools: a test event to a real receiver with a valid signature, a secret rotated with an
 * overlap (either secret verifies during it, only the new one after), a failed delivery replayed
 * (same body and webhook-id, once per click), sample payloads with a real event's keys.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { optOut } from '../../db/opt-outs.js';
import { WEBHOOK_SAMPLE_DATA } from '../../domain/webhook-samples.js';
import type { WebhookEventType } from '../../domain/webhooks.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import {
  numbers,
  sendQueued,
  setBehaviour,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack } from '../support/stack.js';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let receiver: WebhookReceiver;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await server.close();
});

async function workspace() {
  const slug = `o-${randomBytes(5).toString('hex')}`;
  const created = await createWorkspace(server.deps, { name: `Opt ${slug}`, slug }, TEST_OPERATOR);
  return { slug, id: created.id };
}

async function member(slug: string, role: 'admin' | 'developer' | 'viewer') {
  const email = `${role}-${randomBytes(3).toString('hex')}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { browser, email };
}

const cells = (html: string) =>
  [...html.matchAll(/<td class="mono">([^<]*)<\/td>/g)].map((match) => visibleText(match[1] ?? ''));

describe('Opt-outs', () => {
  it('lists, filters by source, searches by number and undoes one with an audit line', async () => {
    const { slug, id } = await workspace();
    await optOut(server.sql, id, '+61412555011', 'reply');
    await optOut(server.sql, id, '+61412555022', 'link');
    await optOut(server.sql, id, '+61412666033', 'operator');
    const { browser, email } = await member(slug, 'admin');
    const base = `/console/w/${slug}/opt-outs`;

    const all = await browser.get(base);
    expect(all.status).toBe(200);
    expect(cells(all.body)).toEqual(['+61412666033', '+61412555022', '+61412555011']);
    expect(cells((await browser.get(`${base}?source=reply`)).body)).toEqual(['+61412555011']);
    expect(cells((await browser.get(`${base}?q=555`)).body)).toEqual([
      '+61412555022',
      '+61412555011',
    ]);
    expect(cells((await browser.get(`${base}?q=%2B61412555022`)).body)).toEqual(['+61412555022']);
    const unknown = await browser.get(`${base}?source=sms`);
    expect(unknown.status).toBe(422);
    expect(visibleText(unknown.body)).toContain('How must be one of link, reply, operator');

    const [row] = await server.sql<{ id: number }[]>`
      select id from opt_outs where workspace_id = ${id} and recipient = '+61412555011'`;
    await browser.get(base);
    const undone = await browser.post(`${base}/${row?.id}/undo`, { back: 'source=reply' });
    expect(undone.status).toBe(303);
    expect(undone.location).toBe(`${base}?source=reply&done=undone`);
    expect(cells((await browser.get(base)).body)).toEqual(['+61412666033', '+61412555022']);
    const audit = await server.sql`
      select actor, source, action, target, details from audit_log
      where workspace_id = ${id} and action = 'opt_out.removed'`;
    expect(audit).toEqual([
      {
        actor: email,
        source: 'console',
        action: 'opt_out.removed',
        target: 'opt-out •••• 5011',
        details: { source: 'reply', opted_out_at: expect.any(String) },
      },
    ]);
    const again = await browser.post(`${base}/${row?.id}/undo`, {});
    expect(again.status).toBe(404);
  });

  it('masks numbers for a member without recipients.read, who may search only by a full number and not undo', async () => {
    const { slug, id } = await workspace();
    await optOut(server.sql, id, '+61412888011', 'reply');
    await optOut(server.sql, id, '+61412888022', 'link');
    const { browser } = await member(slug, 'viewer');
    const base = `/console/w/${slug}/opt-outs`;
    const page = await browser.get(base);
    expect(page.status).toBe(200);
    expect(cells(page.body)).toEqual(['•••• 8022', '•••• 8011']);
    expect(page.body).not.toContain('+614128880');
    expect(page.body).not.toContain('/undo');
    expect(cells((await browser.get(`${base}?q=%2B61412888011`)).body)).toEqual(['•••• 8011']);
    const partial = await browser.get(`${base}?q=555`);
    expect(partial.status).toBe(422);
    expect(/<div class="field-error">([^<]*)<\/div>/.exec(partial.body)?.[1]).toBe(
      'Number: search by the full number in international form, such as +61412555011',
    );
    const [row] = await server.sql<{ id: number }[]>`
      select id from opt_outs where workspace_id = ${id} limit 1`;
    expect((await browser.post(`${base}/${row?.id}/undo`, {})).status).toBe(403);
  });

  it('pages 50 at a time, newest first', async () => {
    const { slug, id } = await workspace();
    await server.sql`
      insert into opt_outs (workspace_id, recipient, source)
      select ${id}, '+614127' || lpad(n::text, 5, '0'), 'reply' from generate_series(1, 55) n`;
    const { browser } = await member(slug, 'admin');
    const first = await browser.get(`/console/w/${slug}/opt-outs?source=reply`);
    expect(cells(first.body)).toHaveLength(50);
    const older = /href="([^"]*before=\d+)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(older).toMatch(/\/opt-outs\?source=reply&before=\d+$/);
    const second = await browser.get(older as string);
    expect(cells(second.body)).toEqual([
      '+61412700005',
      '+61412700004',
      '+61412700003',
      '+61412700002',
      '+61412700001',
    ]);
  });
});

/** Verifies a received request with `secret` (Standard Webhooks), returning its payload. */
function verify(secret: string, request: ReceivedWebhook) {
  return new Webhook(secret.slice('whsec_'.length)).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; test?: boolean; data: Record<string, unknown> };
}

describe('Webhook tools', () => {
  async function endpointFor(path: string) {
    const { slug, id } = await workspace();
    const { browser, email } = await member(slug, 'developer');
    const base = `/console/w/${slug}/developer/webhooks`;
    await browser.get(base);
    const created = await browser.post(base, {
      url: `${receiver.url}${path}`,
      events: ['campaign.completed', 'campaign.canceled'],
    });
    expect(created.status).toBe(201);
    const secret = /<code id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(created.body)?.[1];
    const [endpoint] = await server.sql<{ id: number }[]>`
      select id from webhook_endpoints where workspace_id = ${id}`;
    return {
      browser,
      email,
      workspaceId: id,
      secret: secret as string,
      page: `${base}/${endpoint?.id}`,
    };
  }

  it('sends a test event through the normal delivery, signed, marked and logged', async () => {
    const path = `/test-${randomBytes(4).toString('hex')}`;
    const { browser, email, workspaceId, secret, page } = await endpointFor(path);
    await browser.get(page);
    const sent = await browser.post(`${page}/test`, { type: 'campaign.canceled' });
    expect(sent.status).toBe(303);
    const [request] = await receiver.waitFor(path, 1);
    const payload = verify(secret, request as ReceivedWebhook);
    expect(payload).toEqual({
      type: 'campaign.canceled',
      timestamp: expect.any(String),
      test: true,
      data: WEBHOOK_SAMPLE_DATA['campaign.canceled'],
    });
    await expect
      .poll(async () => visibleText((await browser.get(page)).body), { timeout: 10_000 })
      .toMatch(/campaign\.canceled test msg_[0-9a-f]{32} 1 200/);
    const audit = await server.sql`
      select actor, source, action, target, details from audit_log
      where workspace_id = ${workspaceId} and action like 'webhook.%' order by id`;
    expect(audit).toEqual([
      {
        actor: email,
        source: 'console',
        action: 'webhook.created',
        target: `webhook ${receiver.url}${path}`,
        details: { events: 'campaign.completed,campaign.canceled' },
      },
      {
        actor: email,
        source: 'console',
        action: 'webhook.test_sent',
        target: `webhook ${receiver.url}${path}`,
        details: { type: 'campaign.canceled', event_id: String(request?.headers['webhook-id']) },
      },
    ]);
  });

  it('rotates the secret: during the overlap either secret verifies, after it only the new one', async () => {
    const path = `/rotate-${randomBytes(4).toString('hex')}`;
    const { browser, workspaceId, secret: old, page } = await endpointFor(path);
    await browser.get(page);
    const rotated = await browser.post(`${page}/rotate-secret`, { overlap_hours: '24' });
    expect(rotated.status).toBe(200);
    const fresh = /<code id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(
      rotated.body,
    )?.[1] as string;
    expect(fresh).not.toBe(old);
    expect(visibleText(rotated.body)).toContain(
      'every delivery is signed with the previous secret too',
    );
    expect((await browser.get(page)).body).not.toContain(fresh);

    await browser.post(`${page}/test`, {});
    const [during] = await receiver.waitFor(path, 1);
    expect(String(during?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(fresh, during as ReceivedWebhook).test).toBe(true);
    expect(verify(old, during as ReceivedWebhook).test).toBe(true);

    // The window passes.
    await server.sql`
      update webhook_endpoints set previous_secret_until = now() - interval '1 second'
      where workspace_id = ${workspaceId}`;
    await browser.get(page);
    await browser.post(`${page}/test`, {});
    const after = (await receiver.waitFor(path, 2))[1] as ReceivedWebhook;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(fresh, after).test).toBe(true);
    expect(() => verify(old, after)).toThrow('No matching signature found');

    const [line] = await server.sql`
      select action, details from audit_log
      where workspace_id = ${workspaceId} and action = 'webhook.secret_rotated'`;
    expect(line).toEqual({ action: 'webhook.secret_rotated', details: { overlap_hours: 24 } });
  });

  it('replays a failed delivery: the same body and webhook-id, once per click', async () => {
    const path = `/replay-${randomBytes(4).toString('hex')}`;
    const { browser, workspaceId, page } = await endpointFor(path);
    receiver.plan(path, [500]);
    await browser.get(page);
    await browser.post(`${page}/test`, {});
    const [failed] = await receiver.waitFor(path, 1);
    let shown = '';
    await expect
      .poll(
        async () => {
          shown = (await browser.get(page)).body;
          return /name="key" value="([^"]+)"/.exec(shown)?.[1];
        },
        { timeout: 10_000 },
      )
      .toBeDefined();
    const event = /name="event" value="([^"]+)"/.exec(shown)?.[1];
    const key = /name="key" value="([^"]+)"/.exec(shown)?.[1];
    expect(event).toBe(failed?.headers['webhook-id']);
    // A double click: two posts with the same key.
    for (let click = 0; click < 2; click++)
      expect(
        (await browser.post(`${page}/replay`, { event: event as string, key: key as string }))
          .status,
      ).toBe(303);
    const [replayed] = (await receiver.waitFor(path, 2)).slice(1);
    expect(replayed?.body).toBe(failed?.body);
    expect(replayed?.headers['webhook-id']).toBe(failed?.headers['webhook-id']);
    const replays = await server.sql`
      select e.event_id from webhook_events e join webhook_events o on o.id = e.replay_of
      where o.event_id = ${event as string}`;
    expect(replays).toHaveLength(1);
    const lines = await server.sql`
      select details from audit_log where workspace_id = ${workspaceId} and action = 'webhook.replayed'`;
    expect(lines).toEqual([
      {
        details: {
          type: 'campaign.completed',
          event_id: event,
          replay_event_id: replays[0]?.eventId,
        },
      },
    ]);
    await expect
      .poll(async () => visibleText((await browser.get(page)).body), { timeout: 10_000 })
      .toMatch(/campaign\.completed test replay msg_[0-9a-f]{32} 1 200/);
  });

  it('shows a sample payload per event type', async () => {
    const { slug } = await workspace();
    const { browser } = await member(slug, 'developer');
    const page = await browser.get(`/console/w/${slug}/developer/webhooks`);
    const samples = [...page.body.matchAll(/<summary><code>([^<]+)<\/code><\/summary>/g)].map(
      (match) => match[1],
    );
    expect(samples).toEqual(Object.keys(WEBHOOK_SAMPLE_DATA));
  });
});

describe('sample payloads and real events', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await openStack();
  });
  afterAll(() => stack.close());

  it('carry the same keys as a real event of each type a send produces', async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/real-${tenant.slug}`;
    await stack.sql`
      insert into webhook_endpoints (workspace_id, url, events, secret)
      values (${tenant.workspaceId}, ${`${receiver.url}${path}`},
        array['message.sent', 'message.delivered', 'message.failed', 'campaign.completed'],
        '\\x00'::bytea)`;
    const simulator = await simulatorProvider(stack, tenant.workspaceId, 'samples');
    try {
      const recipients = numbers(2);
      await setBehaviour(simulator.url, { prefix: recipients[1], outcome: 'reject' });
      const id = await sendQueued(
        stack,
        tenant.token,
        { recipients, message: 'Sample check', provider_slug: 'samples' },
        { total: 2 },
      );
      await waitForCompletion(stack, tenant.token, id);
      // message.delivered is written by the same statement as message.sent (0007), with its keys;
      // no receipt reaches this stack's api, so it is not among these.
      const types: WebhookEventType[] = ['message.sent', 'message.failed', 'campaign.completed'];
      await expect
        .poll(
          async () =>
            (
              await stack.sql<{ type: string }[]>`
                select distinct type from webhook_events
                where workspace_id = ${tenant.workspaceId} order by type`
            ).map((row) => row.type),
          { timeout: 20_000 },
        )
        .toEqual([...types].sort());
      for (const type of types) {
        const [real] = await stack.sql<{ data: Record<string, unknown> }[]>`
          select data from webhook_events
          where workspace_id = ${tenant.workspaceId} and type = ${type} limit 1`;
        expect(Object.keys(real?.data ?? {}).sort(), type).toEqual(
          Object.keys(WEBHOOK_SAMPLE_DATA[type]).sort(),
        );
      }
    } finally {
      await simulator.close();
    }
  });
});
