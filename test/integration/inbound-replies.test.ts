/**
 * Two-way replies (issue 27, item 5) on the real stack: a recipient's reply other than STOP/START
 * is stored once per workspace with the campaign it answers, delivered as `message.received`,
 * listed in the console's Inbox (masked without recipients.read) and counted in the MCP reports;
 * HELP is answered once with the workspace's help text, also when the reply is delivered twice.
 * Through the simulator (`POST /v1/inbound`), Twilio's signed inbound webhook and SMPP deliver_sm.
 *
 * Replies and receipts must reach Herald, so this file runs a worker of its own in a namespace of
 * its own, whose `own` provider is a simulator of the file's and whose PUBLIC_URL is this file's
 * api, listening. Webhook events go out through the shared worker's dispatcher.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { providerCreate, providerDisable } from '../../cli/admin/providers.js';
import { userCreate } from '../../cli/admin/users.js';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import { workspaceUpdate } from '../../cli/admin/workspaces.js';
import { UsageError } from '../../cli/output.js';
import { createDeliverySummaryCache } from '../../mcp/delivery-summary-cache.js';
import { getDeliverySummary } from '../../mcp/tools/get-delivery-summary.js';
import { getQuickSendReport } from '../../mcp/tools/get-quick-send-report.js';
import { simulatorCredential } from '../../providers/simulator/definition.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { RECEIPT_SIGNATURE_HEADER, signInbound } from '../../providers/simulator/signature.js';
import { type RunningWorker, startHeraldWorker } from '../../server/worker.js';
import { ConsoleBrowser, visibleText } from '../support/console.js';
import { inbox, numbers, postMessages, waitForCompletion } from '../support/send.js';
import { type SmscPeer, startSmscPeer } from '../support/smsc-peer.js';
import {
  createTenant,
  openStack,
  PUBLIC_URL,
  registerTestNamespace,
  type Stack,
  type Tenant,
} from '../support/stack.js';
import { signTwilio, startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const namespace = `herald-inbound-${Date.now()}`;
const HELP_TEXT = 'Acme Parcels: track at acme.test/t. Reply STOP to opt out.';
const ACCOUNT_SID = `AC${'5d'.repeat(16)}`;
const AUTH_TOKEN = 'tw-inbound-token-27';
const TWILIO_NUMBER = '+15005550006';
const SMPP_ACCOUNT = { systemId: 'herald-in', password: 'Mo-r3ply' };
const OWNER_PASSWORD = 'correct horse 27';

let stack: Stack;
let tenant: Tenant;
let carrier: RunningSimulator;
let worker: RunningWorker;
let receiver: WebhookReceiver;
let twilio: TwilioPeer;
let smsc: SmscPeer;

interface StoredReply {
  providerSlug: string;
  providerMessageId: string | null;
  fromNumber: string;
  toNumber: string;
  text: string;
  campaignId: number | null;
  replyStatus: string | null;
}

function repliesFrom(from: string): Promise<StoredReply[]> {
  return stack.sql<StoredReply[]>`
    select provider_slug, provider_message_id, from_number, to_number, text,
      campaign_id::int, reply_status
    from inbound_messages where workspace_id = ${tenant.workspaceId} and from_number = ${from}
    order by id`;
}

async function send(recipients: string[], extra: Record<string, unknown> = {}) {
  const response = await postMessages(stack, tenant.token, {
    recipients,
    message: 'Your parcel ships today.',
    ...extra,
  });
  expect(response.statusCode, response.body).toBe(202);
  const id = response.json().data.message.id as number;
  await waitForCompletion(stack, tenant.token, id);
  return id;
}

function simulatorInbound(body: Record<string, unknown>) {
  return fetch(`${carrier.url}/v1/inbound`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** A reply as the simulator posts it to the answered message's callback URL, signed. */
function postSignedInbound(fields: Parameters<typeof signInbound>[1]) {
  const credential = simulatorCredential(inject('secret'), tenant.workspaceId, 'own');
  return stack.app.inject({
    method: 'POST',
    url: '/webhooks/providers/own',
    headers: { [RECEIPT_SIGNATURE_HEADER]: signInbound(credential, fields) },
    payload: fields,
  });
}

/** Twilio's "A message comes in" request to the workspace's inbound URL. */
function twilioInbound(params: Record<string, string>, signature?: string) {
  const url = `/webhooks/inbound/${tenant.slug}/tw`;
  return stack.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature ?? signTwilio(AUTH_TOKEN, `${PUBLIC_URL}${url}`, params),
    },
    payload: new URLSearchParams(params).toString(),
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await registerTestNamespace(namespace);
  stack = await openStack(namespace);
  tenant = await createTenant(stack.admin);
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = stack.app.server.address() as AddressInfo;
  carrier = await startSimulator({ port: 0 });
  receiver = await startWebhookReceiver();
  twilio = await startTwilioPeer({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  smsc = await startSmscPeer(SMPP_ACCOUNT);
  worker = await startHeraldWorker({
    address: inject('temporalAddress'),
    namespace,
    sql: stack.sql,
    ownProviderUrl: carrier.url,
    publicUrl: `http://127.0.0.1:${port}`,
    secret: inject('secret'),
    webhookDispatcher: false,
  });
  await providerCreate(stack.admin, {
    workspace: tenant.slug,
    slug: 'tw',
    type: 'twilio',
    'account-sid': ACCOUNT_SID,
    'auth-token': AUTH_TOKEN,
    from: TWILIO_NUMBER,
    'base-url': twilio.url,
  });
  await providerCreate(stack.admin, {
    workspace: tenant.slug,
    slug: 'smsc',
    type: 'smpp',
    host: smsc.host,
    port: String(smsc.port),
    'system-id': SMPP_ACCOUNT.systemId,
    password: SMPP_ACCOUNT.password,
    'source-addr': 'Herald',
  });
}, 120_000);

afterAll(async () => {
  await providerDisable(stack.admin, { workspace: tenant.slug, slug: 'smsc' }).catch(() => {});
  await worker?.shutdown();
  await Promise.all([carrier?.close(), receiver?.close(), twilio?.close(), smsc?.close()]);
  await stack?.close();
}, 60_000);

describe('the HELP setting', () => {
  it('is off until set with herald workspace update --help-text, and refuses a text too long', async () => {
    const [row] =
      await stack.sql`select help_text from workspaces where id = ${tenant.workspaceId}`;
    expect(row).toEqual({ helpText: null });
    const set = await workspaceUpdate(stack.admin, { slug: tenant.slug, 'help-text': HELP_TEXT });
    expect(set.json).toEqual({
      id: tenant.workspaceId,
      slug: tenant.slug,
      name: `Tenant ${tenant.slug}`,
      api_enabled: true,
      help_text: HELP_TEXT,
      quiet_hours: null,
    });
    await expect(
      workspaceUpdate(stack.admin, { slug: tenant.slug, 'help-text': 'x'.repeat(1601) }),
    ).rejects.toThrow(new UsageError('--help-text must be at most 1600 characters, or off'));
    await expect(workspaceUpdate(stack.admin, { slug: tenant.slug })).rejects.toThrow(
      new UsageError('Give at least one of --name, --api-enabled, --help-text, --quiet-hours'),
    );
  });
});

describe('through the simulator', () => {
  const [recipient, stranger, helper] = numbers(3) as [string, string, string];
  let campaign: number;
  let endpointSecret: string;
  const path = `/inbound/${randomUUID()}`;

  beforeAll(async () => {
    const context = {
      ...stack.admin,
      env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true },
    };
    const created = await webhookCreate(context, {
      workspace: tenant.slug,
      url: `${receiver.url}${path}`,
      events: 'message.received',
    });
    endpointSecret = (created.json as { secret: string }).secret;
    expect(endpointSecret).toMatch(/^whsec_/);
  });

  it('POST /v1/inbound delivers a reply, stored with its campaign and sent as message.received', async () => {
    campaign = await send([recipient, helper]);
    const answer = await simulatorInbound({
      from: recipient,
      to: 'Simulator',
      body: 'Can you leave it at the door?',
    });
    expect(answer.status).toBe(202);
    const accepted = (await answer.json()) as { id: string };
    expect(accepted).toEqual({
      id: expect.stringMatching(/^sim_in_[0-9a-f]{32}$/),
      status: 'accepted',
      reference: `cmp-${campaign}-1`,
    });
    await expect.poll(() => repliesFrom(recipient)).toHaveLength(1);
    expect(await repliesFrom(recipient)).toEqual([
      {
        providerSlug: 'own',
        providerMessageId: accepted.id,
        fromNumber: recipient,
        toNumber: 'Simulator',
        text: 'Can you leave it at the door?',
        campaignId: campaign,
        replyStatus: null,
      },
    ]);

    const [request] = await receiver.waitFor(path, 1, 30_000);
    const payload = JSON.parse(request?.body ?? '{}');
    const [stored] = await stack.sql<{ id: number; receivedAt: Date }[]>`
      select id::int, received_at from inbound_messages where provider_message_id = ${accepted.id}`;
    expect(payload).toEqual({
      type: 'message.received',
      timestamp: expect.any(String),
      data: {
        inbound_id: stored?.id,
        from: recipient,
        to: 'Simulator',
        text: 'Can you leave it at the door?',
        provider: 'own',
        provider_message_id: accepted.id,
        campaign_id: campaign,
        received_at: stored?.receivedAt.toISOString(),
      },
    });
  });

  it('answers 404 no_conversation for a number nothing was sent to, and 422 for a bad body', async () => {
    const none = await simulatorInbound({ from: stranger, to: 'Simulator', body: 'Who is this?' });
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({
      error: {
        code: 'no_conversation',
        message: `No message with a callback_url was sent to ${stranger} from Simulator.`,
      },
    });
    const bad = await simulatorInbound({ from: '0400', to: 'Simulator', body: 'x' });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      error: {
        code: 'invalid_request',
        message: 'from: must be an E.164 number like "+61400000000"',
      },
    });
  });

  it('STOP opts out and is not stored as a reply', async () => {
    const [campaignOf] = numbers(1) as [string];
    await send([campaignOf]);
    expect(
      (await simulatorInbound({ from: campaignOf, to: 'Simulator', body: 'STOP' })).status,
    ).toBe(202);
    await expect
      .poll(
        async () =>
          (
            await stack.sql`select source from opt_outs
              where workspace_id = ${tenant.workspaceId} and recipient = ${campaignOf}`
          ).length,
      )
      .toBe(1);
    expect(await repliesFrom(campaignOf)).toEqual([]);
  });

  it('answers HELP once with the help text, though the reply is delivered twice at once', async () => {
    const fields = {
      type: 'inbound' as const,
      id: `sim_in_${randomUUID().replaceAll('-', '')}`,
      reference: `cmp-${campaign}-2`,
      from: helper,
      to: 'Simulator',
      body: 'help',
      at: new Date().toISOString(),
    };
    const answers = await Promise.all([postSignedInbound(fields), postSignedInbound(fields)]);
    expect(answers.map((answer) => [answer.statusCode, answer.body])).toEqual([
      [204, ''],
      [204, ''],
    ]);
    // And once more, later, as a provider retrying would.
    expect((await postSignedInbound(fields)).statusCode).toBe(204);
    const helpAnswers = async () =>
      (await inbox(carrier.url, helper)).filter((message) => message.body === HELP_TEXT);
    await expect.poll(helpAnswers, { timeout: 20_000 }).toHaveLength(1);
    expect(await helpAnswers()).toEqual([
      {
        id: expect.stringMatching(/^sim_/),
        to: helper,
        from: 'Simulator',
        body: HELP_TEXT,
        reference: expect.stringMatching(/^inb-\d+$/),
        received_at: expect.any(String),
      },
    ]);
    await expect.poll(async () => (await repliesFrom(helper))[0]?.replyStatus).toBe('sent');
    expect(await repliesFrom(helper)).toEqual([
      {
        providerSlug: 'own',
        providerMessageId: fields.id,
        fromNumber: helper,
        toNumber: 'Simulator',
        text: 'help',
        campaignId: campaign,
        replyStatus: 'sent',
      },
    ]);
    await pause(1_000);
    expect(await helpAnswers()).toHaveLength(1);
  });

  it('refuses a reply signed with another key: 403', async () => {
    const answer = await stack.app.inject({
      method: 'POST',
      url: '/webhooks/providers/own',
      headers: { [RECEIPT_SIGNATURE_HEADER]: signInbound('not-the-key', fakeInbound(campaign)) },
      payload: fakeInbound(campaign),
    });
    expect([answer.statusCode, answer.json()]).toEqual([403, { message: 'Invalid signature.' }]);
  });

  it('counts the replies in the batch report and the delivery summary (MCP)', async () => {
    const context = {
      sql: stack.sql,
      caller: { workspaceId: tenant.workspaceId, userId: 0 },
      now: () => new Date(),
      deliverySummaries: createDeliverySummaryCache(0),
    };
    // The door question and the HELP; not the STOP.
    const report = await getQuickSendReport.run(context, { quick_send_id: campaign });
    expect(report.quick_send).toMatchObject({ id: campaign, sent: 2, replies: 2 });
    const summary = await getDeliverySummary.run(context, { days: 7 });
    expect(summary).toMatchObject({ replies: 2 });
  });
});

function fakeInbound(campaign: number) {
  return {
    type: 'inbound' as const,
    id: 'sim_in_forged',
    reference: `cmp-${campaign}-1`,
    from: '+61400000999',
    to: 'Simulator',
    body: 'forged',
    at: new Date().toISOString(),
  };
}

describe('through Twilio', () => {
  const [recipient] = numbers(1) as [string];
  let campaign: number;
  const params = (body: string, sid: string) => ({
    MessageSid: sid,
    AccountSid: ACCOUNT_SID,
    From: recipient,
    To: TWILIO_NUMBER,
    Body: body,
    NumMedia: '0',
  });

  it('stores a signed inbound message once per MessageSid, with the campaign that sent to the number', async () => {
    campaign = await send([recipient], { provider_slug: 'tw' });
    const sid = `SM${randomUUID().replaceAll('-', '')}`;
    const first = await twilioInbound(params('Running late, 10 min', sid));
    const again = await twilioInbound(params('Running late, 10 min', sid));
    expect([first.statusCode, first.body, again.statusCode, again.body]).toEqual([
      204,
      '',
      204,
      '',
    ]);
    expect(await repliesFrom(recipient)).toEqual([
      {
        providerSlug: 'tw',
        providerMessageId: sid,
        fromNumber: recipient,
        toNumber: TWILIO_NUMBER,
        text: 'Running late, 10 min',
        campaignId: campaign,
        replyStatus: null,
      },
    ]);
  });

  it('refuses an unsigned or wrongly signed message: 403, nothing stored', async () => {
    const forged = await twilioInbound(params('forged', 'SMforged'), 'c2lnbmF0dXJl');
    expect([forged.statusCode, forged.json()]).toEqual([403, { message: 'Invalid signature.' }]);
    expect((await repliesFrom(recipient)).map((reply) => reply.text)).not.toContain('forged');
  });

  it('answers HELP once through Twilio, from the number it was sent to, though delivered twice', async () => {
    const sid = `SM${randomUUID().replaceAll('-', '')}`;
    const answers = await Promise.all([
      twilioInbound(params('HELP', sid)),
      twilioInbound(params('HELP', sid)),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([204, 204]);
    const helpAnswers = () =>
      twilio.messages.filter((message) => message.to === recipient && message.body === HELP_TEXT);
    await expect.poll(helpAnswers, { timeout: 20_000 }).toHaveLength(1);
    expect(helpAnswers()).toEqual([
      expect.objectContaining({ to: recipient, from: TWILIO_NUMBER, body: HELP_TEXT }),
    ]);
    await pause(1_000);
    expect(helpAnswers()).toHaveLength(1);
  });
});

describe('through SMPP', () => {
  const [recipient] = numbers(1) as [string];
  let campaign: number;

  it('stores a deliver_sm that is not a receipt, once when the SMSC delivers it again', async () => {
    campaign = await send([recipient], { provider_slug: 'smsc' });
    const reply = { from: recipient, to: 'Herald', text: 'Is it the blue box?' };
    expect(await smsc.sendReply(reply)).toBe(0);
    expect(await smsc.sendReply(reply)).toBe(0);
    expect(await repliesFrom(recipient)).toEqual([
      {
        providerSlug: 'smsc',
        providerMessageId: null,
        fromNumber: recipient,
        toNumber: 'Herald',
        text: 'Is it the blue box?',
        campaignId: campaign,
        replyStatus: null,
      },
    ]);
  });

  it('answers HELP once over the bind, from the sender it was sent to', async () => {
    expect(await smsc.sendReply({ from: recipient, to: 'Herald', text: 'Help' })).toBe(0);
    expect(await smsc.sendReply({ from: recipient, to: 'Herald', text: 'Help' })).toBe(0);
    const helpAnswers = () => smsc.messagesTo(recipient).filter((m) => m.text === HELP_TEXT);
    await expect.poll(helpAnswers, { timeout: 30_000 }).toHaveLength(1);
    expect(helpAnswers()[0]).toMatchObject({ to: recipient, from: 'Herald', text: HELP_TEXT });
    await pause(1_000);
    expect(helpAnswers()).toHaveLength(1);
  });
});

describe('the console Inbox', () => {
  it('lists the replies, masked for a developer, in full for an owner who also sets the HELP text', async () => {
    const developer = new ConsoleBrowser(stack.app);
    expect((await developer.signIn(`dev@${tenant.slug}.test`, 'correct horse 1')).status).toBe(303);
    const masked = await developer.get(`/console/w/${tenant.slug}/inbox`);
    expect(masked.status).toBe(200);
    const text = visibleText(masked.body);
    expect(text).toContain('Numbers are shown by their last four digits');
    expect(text).toContain('Running late, 10 min');
    const [twilioReply] = await stack.sql<{ fromNumber: string }[]>`
      select from_number from inbound_messages
      where workspace_id = ${tenant.workspaceId} and text = 'Running late, 10 min'`;
    const number = twilioReply?.fromNumber as string;
    expect(masked.body).toContain(`•••• ${number.slice(-4)}`);
    expect(masked.body).not.toContain(number);
    expect(masked.body).not.toContain(number.slice(1));
    expect(masked.body).toContain(`href="/console/w/${tenant.slug}/inbox"`);
    // A developer reads the HELP text but may not change it.
    expect(text).toContain(HELP_TEXT);
    expect(masked.body).not.toContain(`action="/console/w/${tenant.slug}/inbox/help-text"`);
    const refused = await developer.post(`/console/w/${tenant.slug}/inbox/help-text`, {
      help_text: 'hijacked',
    });
    expect(refused.status).toBe(403);

    const email = `owner@${tenant.slug}.test`;
    await userCreate(stack.admin, {
      workspace: tenant.slug,
      email,
      password: OWNER_PASSWORD,
      role: 'owner',
    });
    const owner = new ConsoleBrowser(stack.app);
    expect((await owner.signIn(email, OWNER_PASSWORD)).status).toBe(303);
    const full = await owner.get(`/console/w/${tenant.slug}/inbox`);
    expect(full.body).toContain(number);
    expect(visibleText(full.body)).not.toContain('Numbers are shown by their last four digits');

    const off = await owner.post(`/console/w/${tenant.slug}/inbox/help-text`, { help_text: '' });
    expect([off.status, off.location]).toEqual([303, `/console/w/${tenant.slug}/inbox?done=off`]);
    const [row] =
      await stack.sql`select help_text from workspaces where id = ${tenant.workspaceId}`;
    expect(row).toEqual({ helpText: null });
    const long = await owner.post(`/console/w/${tenant.slug}/inbox/help-text`, {
      help_text: 'y'.repeat(1601),
    });
    expect(long.status).toBe(422);
    expect(visibleText(long.body)).toContain('Help text must be at most 1600 characters, or off');
    const back = await owner.post(`/console/w/${tenant.slug}/inbox/help-text`, {
      help_text: HELP_TEXT,
    });
    expect([back.status, back.location]).toEqual([
      303,
      `/console/w/${tenant.slug}/inbox?done=saved`,
    ]);
  });
});
