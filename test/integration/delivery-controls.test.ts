/**
 * What governs delivery beyond routing (issue: real providers, receipts, webhooks, opt-out):
 * the per-recipient opt-out link of marketing messages and its confirmation page, STOP and START
 * replies, provider throughput limits shared by every campaign, and the validity period.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPacer } from '../../activities/throughput.js';
import { providerCreate, routeCreate } from '../../cli/admin/providers.js';
import { reserveSlots } from '../../db/send-slots.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { startSimulator } from '../../providers/simulator/server.js';
import {
  dispatchPrepared,
  inbox,
  invalid,
  messageRows,
  numbers,
  postMessages,
  sendQueued,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import { signTwilio } from '../support/twilio-peer.js';

const simulatorUrl = inject('simulatorUrl');
/** Where the shared worker's links point (its PUBLIC_URL). */
const workerPublicUrl = `http://127.0.0.1:${inject('apiPort')}`;
const LINK = new RegExp(`${workerPublicUrl.replaceAll('.', '\\.')}/o/([0-9A-Za-z]{10})`);

let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
});
afterAll(async () => {
  await stack?.close();
});

async function optOutsOf(workspaceId: number) {
  return stack.sql<{ recipient: string; source: string }[]>`
    select recipient, source from opt_outs where workspace_id = ${workspaceId} order by recipient`;
}

async function linkSentTo(recipient: string): Promise<{ body: string; path: string }> {
  const [message] = await inbox(simulatorUrl, recipient);
  const token = LINK.exec(message?.body ?? '')?.[1];
  expect(token, message?.body).toBeDefined();
  return { body: message?.body as string, path: `/o/${token}` };
}

describe('the opt-out link of marketing messages', () => {
  it('is a short link per recipient under PUBLIC_URL, reused by later messages', async () => {
    const [first, second] = numbers(2) as [string, string];
    const send = (recipients: string[]) =>
      sendQueued(
        stack,
        tenant.token,
        { recipients, message: 'Sale today. Stop: {opt_out_url}', message_purpose: 'marketing' },
        { total: recipients.length },
      ).then((id) => waitForCompletion(stack, tenant.token, id));
    await send([first, second]);
    const one = await linkSentTo(first);
    const two = await linkSentTo(second);
    expect(one.body).toBe(`Sale today. Stop: ${workerPublicUrl}${one.path}`);
    expect(one.path).not.toBe(two.path);

    await send([first]);
    const again = await linkSentTo(first);
    expect(again.path).toBe(one.path);
  });

  it('opens a confirmation page that records nothing, and the confirmation opts out', async () => {
    const [recipient, other] = numbers(2) as [string, string];
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [recipient, other],
        message: 'New arrivals {opt_out_url}',
        message_purpose: 'marketing',
      },
      { total: 2 },
    );
    await waitForCompletion(stack, tenant.token, id);
    const { path } = await linkSentTo(recipient);

    const page = await stack.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(
      `Stop marketing messages from <strong>Tenant ${tenant.slug}</strong> to •••• ${recipient.slice(-4)}?`,
    );
    expect(page.body).not.toContain(recipient);
    expect(await optOutsOf(tenant.workspaceId)).toEqual([]);

    const confirmed = await stack.app.inject({ method: 'POST', url: path });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.body).toContain('You are unsubscribed');
    expect(await optOutsOf(tenant.workspaceId)).toEqual([{ recipient, source: 'link' }]);
    // Confirming twice is harmless; the page now says it is done.
    expect((await stack.app.inject({ method: 'POST', url: path })).statusCode).toBe(200);
    expect((await stack.app.inject({ method: 'GET', url: path })).body).toContain(
      'You are unsubscribed',
    );

    // The next marketing send leaves them out and counts them; a transactional one does not.
    const marketing = await sendQueued(
      stack,
      tenant.token,
      { recipients: [recipient, other], message: 'Last call', message_purpose: 'marketing' },
      { total: 1, requested: 2, excluded: 1 },
    );
    expect((await messageRows(stack, marketing)).map((row) => row.recipient)).toEqual([other]);
    await sendQueued(
      stack,
      tenant.token,
      { recipients: [recipient], message: 'Your order shipped' },
      { total: 1 },
    );
    await stack.sql`delete from opt_outs where workspace_id = ${tenant.workspaceId}`;
  });

  it('holds back a queued marketing message whose recipient opted out after the send', async () => {
    const [leaver, stayer] = numbers(2) as [string, string];
    const send = (purpose: 'marketing' | 'transactional') =>
      dispatchPrepared(
        stack,
        tenant.workspaceId,
        {
          body: `A ${purpose} message`,
          providerSlug: 'own',
          recipients: [leaver, stayer],
          purpose,
        },
        () => stack.sql`
          insert into opt_outs (workspace_id, recipient, source)
          values (${tenant.workspaceId}, ${leaver}, 'reply') on conflict do nothing`,
      );
    const marketing = await send('marketing');
    expect(await waitForCompletion(stack, tenant.token, marketing)).toMatchObject({
      sent_count: 1,
      failed_count: 1,
    });
    expect((await messageRows(stack, marketing))[0]).toMatchObject({
      recipient: leaver,
      status: 'failed',
      error: 'the recipient opted out after the send',
    });
    const transactional = await send('transactional');
    expect(await waitForCompletion(stack, tenant.token, transactional)).toMatchObject({
      sent_count: 2,
    });
    expect((await inbox(simulatorUrl, leaver)).map(({ body }) => body)).toEqual([
      'A transactional message',
    ]);
    await stack.sql`delete from opt_outs where workspace_id = ${tenant.workspaceId}`;
  });

  it('answers an unknown link with a 404 page', async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/o/AAAAAAAAAA' });
    expect(response.statusCode).toBe(404);
    expect(response.body).toContain('This opt-out link is not valid.');
    expect((await stack.app.inject({ method: 'POST', url: '/o/AAAAAAAAAA' })).statusCode).toBe(404);
  });

  it('counts toward the segments at the length of the link it becomes', async () => {
    // The link is http://herald.test/o/ + 10 characters = 31. 140 + 1 + 31 = 172 characters as
    // sent: 2 segments, though the 154 characters as written would fit in one. 120 + 1 + 31 = 152: 1.
    const base = 'x'.repeat(140);
    const [recipient] = numbers(1) as [string];
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: [recipient], message: `${base} {opt_out_url}`, message_purpose: 'marketing' },
      { total: 1 },
    );
    const [row] = await stack.sql<{ segments: number }[]>`
      select segments from campaigns where id = ${id}`;
    expect(`${base} {opt_out_url}`.length).toBe(154);
    expect(row?.segments).toBe(2);
    const short = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [recipient],
        message: `${'x'.repeat(120)} {opt_out_url}`,
        message_purpose: 'marketing',
      },
      { total: 1 },
    );
    const [shortRow] = await stack.sql<{ segments: number }[]>`
      select segments from campaigns where id = ${short}`;
    expect(shortRow?.segments).toBe(1);
  });
});

describe('STOP and START replies', () => {
  const ACCOUNT_SID = `AC${'6e'.repeat(16)}`;
  const AUTH_TOKEN = 'tw-inbound-token-51d0';
  const url = () => `/webhooks/inbound/${tenant.slug}/tw-in`;

  beforeAll(async () => {
    await providerCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'tw-in',
      type: 'twilio',
      'account-sid': ACCOUNT_SID,
      'auth-token': AUTH_TOKEN,
      from: '+15005550006',
    });
  });

  /** An incoming-message webhook as Twilio posts it, signed for the api's PUBLIC_URL. */
  function reply(from: string, body: string, authToken = AUTH_TOKEN) {
    const params = {
      MessageSid: `SM${'1'.repeat(32)}`,
      AccountSid: ACCOUNT_SID,
      From: from,
      To: '+15005550006',
      Body: body,
      NumMedia: '0',
    };
    return stack.app.inject({
      method: 'POST',
      url: url(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signTwilio(authToken, `http://herald.test${url()}`, params),
      },
      payload: new URLSearchParams(params).toString(),
    });
  }

  it('opts a sender out on STOP and back in on START; other text changes nothing', async () => {
    const [sender] = numbers(1) as [string];
    expect((await reply(sender, 'Thanks!')).statusCode).toBe(204);
    expect(await optOutsOf(tenant.workspaceId)).toEqual([]);
    expect((await reply(sender, ' stop ')).statusCode).toBe(204);
    expect(await optOutsOf(tenant.workspaceId)).toEqual([{ recipient: sender, source: 'reply' }]);

    await sendQueued(
      stack,
      tenant.token,
      { recipients: [sender], message: 'Offer', message_purpose: 'marketing' },
      { total: 0, requested: 1, excluded: 1 },
    );

    expect((await reply(sender, 'START')).statusCode).toBe(204);
    expect(await optOutsOf(tenant.workspaceId)).toEqual([]);
  });

  it('refuses a reply whose signature does not verify, and an unknown provider', async () => {
    const [sender] = numbers(1) as [string];
    const forged = await reply(sender, 'STOP', 'not-the-auth-token');
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toEqual({ message: 'Invalid signature.' });
    expect(await optOutsOf(tenant.workspaceId)).toEqual([]);
    const unknown = await stack.app.inject({
      method: 'POST',
      url: `/webhooks/inbound/${tenant.slug}/nope`,
      payload: {},
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ message: 'No such workspace provider takes replies.' });
  });
});

describe('provider throughput', () => {
  let limited: RunningSimulator;
  beforeAll(async () => {
    limited = await simulatorProvider(stack, tenant.workspaceId, 'slow', { messagesPerSecond: 20 });
  });
  afterAll(() => limited?.close());

  it('holds across concurrent campaigns: never more than its rate in any second', async () => {
    const first = numbers(40);
    const second = numbers(40);
    const ids = await Promise.all(
      [first, second].map((recipients) =>
        sendQueued(
          stack,
          tenant.token,
          { recipients, message: 'Paced', provider_slug: 'slow' },
          { total: recipients.length },
        ),
      ),
    );
    for (const id of ids) {
      expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({ sent_count: 40 });
    }
    const received = (
      await Promise.all([...first, ...second].map((recipient) => inbox(limited.url, recipient)))
    )
      .flat()
      .map((message) => Date.parse(message.received_at))
      .sort((a, b) => a - b);
    expect(received).toHaveLength(80);
    // 80 submissions at 20/s start at least 79 × 50 ms apart. A submission may leave a little
    // after its slot (a busy event loop), never before it, so arrivals are allowed 100 ms of
    // bunching: no 23 within one second, and the whole run spans at least 3.85 s. Unpaced, all
    // 80 arrive within a few hundred milliseconds.
    const span = (received.at(-1) as number) - (received[0] as number);
    expect(span).toBeGreaterThanOrEqual(3_850);
    for (let index = 0; index + 22 < received.length; index += 1) {
      expect((received[index + 22] as number) - (received[index] as number)).toBeGreaterThanOrEqual(
        1_000,
      );
    }
  });

  it('shares its slots between workers through Postgres', async () => {
    // Two pacers stand for two worker processes: their reservations never overlap.
    const key = `test-${Date.now()}`;
    // Each reservation answers how long from now its first slot starts: as instants, the two
    // blocks of five slots at 10/s lie half a second apart, whichever came first.
    const reserve = () => reserveSlots(stack.sql, key, 10, 5).then((delay) => Date.now() + delay);
    const [a, b] = await Promise.all([reserve(), reserve()]);
    expect(Math.abs(a - b)).toBeGreaterThanOrEqual(480);

    const provider = { slug: 'paced', messagesPerSecond: 10 } as never;
    const started = Date.now();
    const pacers = [
      createPacer(stack.sql, tenant.workspaceId),
      createPacer(stack.sql, tenant.workspaceId),
    ];
    const times = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        (pacers[index % 2] as ReturnType<typeof createPacer>)
          .wait(provider)
          .then(() => Date.now() - started),
      ),
    );
    // Ten slots at 10/s: the last starts 900 ms after the first.
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(850);
  });

  it('keeps slots reserved ahead (a first try’s) for their waits, and reserves the next after them', async () => {
    const slug = `ahead-${Date.now()}`;
    const provider = { slug, messagesPerSecond: 10 } as never;
    const pacer = createPacer(stack.sql, tenant.workspaceId);
    const started = performance.now();
    const since = () => performance.now() - started;
    pacer.reserveAhead(provider, 3);
    await pacer.wait(provider);
    const first = since();
    // Another worker reserves once the three are: its slot comes after them.
    const other = await reserveSlots(stack.sql, `${tenant.workspaceId}/${slug}`, 10, 1);
    const rest = await Promise.all(
      Array.from({ length: 3 }, () => pacer.wait(provider).then(since)),
    );
    // Three reserved slots 100 ms apart; the fourth after the other worker's, at 400 ms or later.
    expect([first, ...rest.slice(0, 2)].map((time) => Math.round(time / 100))).toEqual([0, 1, 2]);
    expect(other).toBeGreaterThanOrEqual(250);
    expect(rest[2]).toBeGreaterThanOrEqual(390);
  });
});

describe('the destinations a provider declares', () => {
  let nzOnly: RunningSimulator;
  let anywhere: RunningSimulator;
  beforeAll(async () => {
    nzOnly = await startSimulator({ port: 0 });
    anywhere = await startSimulator({ port: 0 });
    for (const [slug, simulator, countries] of [
      ['nz-only', nzOnly, 'nz'],
      ['anywhere', anywhere, undefined],
    ] as const) {
      await providerCreate(stack.admin, {
        workspace: tenant.slug,
        slug,
        type: 'simulator',
        'base-url': simulator.url,
        ...(countries ? { countries } : {}),
      });
    }
    await routeCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'nz-first',
      providers: 'nz-only,anywhere',
    });
  });
  afterAll(async () => {
    await nzOnly?.close();
    await anywhere?.close();
  });
  const NZ_MOBILE = '+64211234567';

  it('refuses a send to a number outside them, naming each recipient', async () => {
    const [australian] = numbers(1) as [string];
    const response = await postMessages(stack, tenant.token, {
      recipients: [NZ_MOBILE, australian],
      message: 'Kia ora',
      provider_slug: 'nz-only',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(
      invalid(
        'recipients.1',
        'The recipients.1 field must be a number in a country the selected provider serves.',
      ),
    );
  });

  it('passes over a route provider that does not serve the recipient', async () => {
    const [australian] = numbers(1) as [string];
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [NZ_MOBILE, australian],
        message: 'Routed by country',
        routing_type: 'failover',
        failover_route_slug: 'nz-first',
      },
      { total: 2 },
    );
    await waitForCompletion(stack, tenant.token, id);
    expect((await messageRows(stack, id)).map((row) => [row.recipient, row.providerSlug])).toEqual([
      [NZ_MOBILE, 'nz-only'],
      [australian, 'anywhere'],
    ]);
    expect(await inbox(nzOnly.url, australian)).toEqual([]);
  });

  it('refuses an OTP to a number outside them', async () => {
    const [australian] = numbers(1) as [string];
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipient: australian, purpose: 'login', provider_slug: 'nz-only' },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(
      invalid(
        'recipient',
        'The recipient field must be a number in a country the selected provider serves.',
      ),
    );
  });

  it('takes only ISO 3166 codes on `provider create`', async () => {
    await expect(
      providerCreate(stack.admin, {
        workspace: tenant.slug,
        slug: 'uk',
        type: 'simulator',
        'base-url': anywhere.url,
        countries: 'AU,UK',
      }),
    ).rejects.toThrow('--countries: "UK" is not an ISO 3166 alpha-2 country code');
  });
});

describe('the validity period', () => {
  it('fails messages that could not be submitted in time, and sends none of them late', async () => {
    const recipients = numbers(3);
    // As if the campaign had waited past its validity (Temporal down, a long provider queue).
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      { body: 'Too late', providerSlug: 'own', recipients },
      (campaignId) =>
        stack.sql`update campaigns set valid_until = now() - interval '1 second' where id = ${campaignId}`,
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      total_recipients: 3,
      sent_count: 0,
      failed_count: 3,
    });
    for (const row of await messageRows(stack, id)) {
      expect(row).toMatchObject({
        status: 'failed',
        error: 'validity period ended before it could be submitted',
      });
      expect(await inbox(simulatorUrl, row.recipient)).toEqual([]);
    }
  });

  it('is MESSAGE_VALIDITY_HOURS after the send', async () => {
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: numbers(1), message: 'On time' },
      { total: 1 },
    );
    const [row] = await stack.sql<{ hours: number }[]>`
      select extract(epoch from valid_until - created_at) / 3600 as hours from campaigns where id = ${id}`;
    expect(Number(row?.hours)).toBeCloseTo(24, 2);
  });
});
