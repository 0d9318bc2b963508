/**
 * Campaigns through a Twilio provider on the real stack, against the local Twilio-format peer
 * (test/support/twilio-peer.ts): every recipient reaches the peer exactly once, in the request
 * Twilio documents; signed status callbacks flow back into the messages and the reporting table;
 * forged callbacks are refused; a Twilio rejection fails over to the next provider of a route,
 * but not a 21610 (an opt-out); a 5xx on create is never followed by a second create; a 429 waits
 * its Retry-After; the credentials in the providers row are ciphertext.
 *
 * The shared worker hands providers StatusCallback URLs under 127.0.0.1:<apiPort>, so this file
 * verifies callbacks with an api instance whose PUBLIC_URL is that origin. It does not listen
 * (send-lifecycle.test.ts owns the port): the peer's signed callbacks are delivered with inject.
 */
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { providerCreate, routeCreate } from '../../cli/admin/providers.js';
import { parseEnv } from '../../config/env.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { decryptCredentials, providerCredentialsContext } from '../../security/credentials.js';
import { buildApp } from '../../server/app.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
import {
  dispatchPrepared,
  inbox,
  markInterrupted,
  messageRows,
  numbers,
  reportCounts,
  sendQueued,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import { type SignedCallback, startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';

const ACCOUNT_SID = `AC${'5f'.repeat(16)}`;
const AUTH_TOKEN = 'tw-auth-token-7c1e9b2a44d0';
const FROM = '+15005550006';
const publicUrl = `http://127.0.0.1:${inject('apiPort')}`;

let stack: Stack;
let tenant: Tenant;
let peer: TwilioPeer;
let simulator: RunningSimulator;
let receiver: FastifyInstance;

/** Posts a callback to Herald as Twilio would, to the path and query of its StatusCallback. */
function deliver(callback: SignedCallback, override: Partial<SignedCallback> = {}) {
  const { url, headers, payload } = { ...callback, ...override };
  const target = new URL(url);
  return receiver.inject({
    method: 'POST',
    url: target.pathname + target.search,
    headers,
    payload,
  });
}

async function sendThroughTwilio(recipients: string[], extra: Record<string, unknown> = {}) {
  const id = await sendQueued(
    stack,
    tenant.token,
    { recipients, message: 'Via Twilio', provider_slug: 'tw', ...extra },
    { total: recipients.length },
  );
  await waitForCompletion(stack, tenant.token, id);
  return id;
}

function peerMessageTo(recipient: string) {
  const matches = peer.messages.filter((message) => message.to === recipient);
  expect(matches).toHaveLength(1);
  return matches[0] as (typeof matches)[number];
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  peer = await startTwilioPeer({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  await providerCreate(stack.admin, {
    workspace: tenant.slug,
    slug: 'tw',
    type: 'twilio',
    'account-sid': ACCOUNT_SID,
    'auth-token': AUTH_TOKEN,
    from: FROM,
    'base-url': peer.url,
    name: 'Twilio',
  });
  simulator = await simulatorProvider(stack, tenant.workspaceId, 'sim');
  await routeCreate(stack.admin, {
    workspace: tenant.slug,
    slug: 'twilio-first',
    providers: 'tw,sim',
  });
  receiver = buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL: publicUrl }),
      publicUrl,
      secret: inject('secret'),
      sql: stack.sql,
      temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    },
    { logger: false },
  );
  await receiver.ready();
});

afterAll(async () => {
  await receiver?.close();
  await peer?.close();
  await simulator?.close();
  await stack?.close();
});

describe('a campaign through a Twilio provider', () => {
  it('reaches every recipient exactly once, in the request Twilio documents', async () => {
    const recipients = numbers(5);
    const id = await sendThroughTwilio(recipients);
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      total_recipients: 5,
      sent_count: 5,
      failed_count: 0,
    });
    for (const row of await messageRows(stack, id)) {
      const message = peerMessageTo(row.recipient);
      expect(row).toMatchObject({
        status: 'sent',
        providerSlug: 'tw',
        providerMessageId: message.sid,
      });
      expect(message).toEqual({
        sid: expect.stringMatching(/^SM[0-9a-f]{32}$/),
        accountSid: ACCOUNT_SID,
        to: row.recipient,
        from: FROM,
        messagingServiceSid: null,
        body: 'Via Twilio',
        statusCallback: `${publicUrl}/webhooks/providers/tw?ref=cmp-${id}-${row.seq}`,
        // The campaign's 24-hour validity, capped at Twilio's 10 hours.
        validityPeriod: 36_000,
      });
    }
    expect(peer.problems).toEqual([]);
  });

  it('records signed status callbacks in the messages and the reporting table', async () => {
    const recipients = numbers(4);
    const id = await sendThroughTwilio(recipients);
    const rows = await messageRows(stack, id);
    const sids = rows.map((row) => peerMessageTo(row.recipient).sid) as [
      string,
      string,
      string,
      string,
    ];

    // Statuses on the way are acknowledged and change nothing.
    for (const sid of sids)
      expect((await deliver(peer.statusCallback(sid, 'sent'))).statusCode).toBe(204);
    expect((await messageRows(stack, id)).map((row) => row.deliveryStatus)).toEqual([
      null,
      null,
      null,
      null,
    ]);

    const before = Date.now();
    const answers = [
      await deliver(peer.statusCallback(sids[0], 'delivered')),
      await deliver(peer.statusCallback(sids[1], 'delivered')),
      await deliver(peer.statusCallback(sids[2], 'undelivered', { ErrorCode: '30003' })),
      await deliver(peer.statusCallback(sids[3], 'failed', { ErrorCode: '30008' })),
    ];
    expect(answers.map((answer) => answer.statusCode)).toEqual([204, 204, 204, 204]);
    const receipted = await messageRows(stack, id);
    expect(receipted.map((row) => [row.deliveryStatus, row.deliveryErrorCode])).toEqual([
      ['delivered', null],
      ['delivered', null],
      ['undelivered', '30003'],
      ['undelivered', '30008'],
    ]);
    // Twilio's callbacks carry no timestamp: the time Herald received each one is kept.
    for (const row of receipted) {
      expect(row.deliveredAt?.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(row.deliveredAt?.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    }
    expect(await reportCounts(stack, id)).toEqual({
      sent: 4,
      failedToSend: 0,
      delivered: 2,
      deliveryFailed: 2,
    });
  });

  it('keeps a status it cannot map as unknown, counted neither delivered nor failed', async () => {
    const [recipient] = numbers(1) as [string];
    const id = await sendThroughTwilio([recipient]);
    const { sid } = peerMessageTo(recipient);
    expect((await deliver(peer.statusCallback(sid, 'canceled'))).statusCode).toBe(204);
    expect(await messageRows(stack, id)).toMatchObject([
      { deliveryStatus: 'unknown', deliveryErrorCode: 'twilio:canceled' },
    ]);
    expect(await reportCounts(stack, id)).toEqual({
      sent: 1,
      failedToSend: 0,
      delivered: 0,
      deliveryFailed: 0,
    });
  });

  it('refuses callbacks whose X-Twilio-Signature does not verify, with 403', async () => {
    const [recipient] = numbers(1) as [string];
    const id = await sendThroughTwilio([recipient]);
    const callback = peer.statusCallback(peerMessageTo(recipient).sid, 'delivered');
    const forged = [
      // Missing signature.
      deliver(callback, { headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      // A parameter changed after signing.
      deliver(callback, {
        payload: new URLSearchParams({
          ...callback.params,
          MessageStatus: 'undelivered',
        }).toString(),
      }),
      // Signed for another message's URL.
      deliver(callback, { url: callback.url.replace(/-1$/, '-2') }),
      // A signature from another token.
      deliver(callback, {
        headers: { ...callback.headers, 'x-twilio-signature': 'MqLsZ5dJ8f0eUjV4cQa1kP2sT9c=' },
      }),
    ];
    for (const response of await Promise.all(forged)) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ message: 'Invalid signature.' });
    }
    expect((await messageRows(stack, id))[0]?.deliveryStatus).toBeNull();
    expect((await deliver(callback)).statusCode).toBe(204);
    expect((await messageRows(stack, id))[0]?.deliveryStatus).toBe('delivered');
  });

  it('fails over from a Twilio rejection to the next provider of the route', async () => {
    const [refused, accepted] = numbers(2) as [string, string];
    peer.answer(refused, {
      kind: 'error',
      status: 400,
      code: 21408,
      message: 'Permission to send an SMS has not been enabled for the region',
    });
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [refused, accepted],
        message: 'Failover',
        routing_type: 'failover',
        failover_route_slug: 'twilio-first',
      },
      { total: 2 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 2,
      failed_count: 0,
    });
    expect((await messageRows(stack, id)).map((row) => [row.recipient, row.providerSlug])).toEqual([
      [refused, 'sim'],
      [accepted, 'tw'],
    ]);
    expect(peer.refused).toContainEqual({ to: refused, code: 21408 });
    expect(peer.messages.filter((message) => message.to === refused)).toEqual([]);
    expect((await inbox(simulator.url, refused)).map(({ body }) => body)).toEqual(['Failover']);
    expect(await inbox(simulator.url, accepted)).toEqual([]);
    peerMessageTo(accepted);
  });

  it('never resends a message whose interrupted attempt Twilio cannot be asked about', async () => {
    const [interrupted, fresh] = numbers(2) as [string, string];
    // As a worker that died mid-submission leaves it: attempted on Twilio, outcome unknown.
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      { body: 'Once at most', providerSlug: 'tw', recipients: [interrupted, fresh] },
      (campaignId) => markInterrupted(stack, campaignId, [1], 'tw'),
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 1,
      failed_count: 1,
    });
    expect((await messageRows(stack, id))[0]).toMatchObject({
      status: 'failed',
      error: 'outcome unknown: an attempt was interrupted, and tw cannot look messages up',
    });
    expect(peer.messages.filter((message) => message.to === interrupted)).toEqual([]);
    peerMessageTo(fresh);
  });
});

describe('Twilio answers that do not settle whether the message was taken', () => {
  it('never creates a message twice after a 500, 502, 503 or 504: each is failed as unknown', async () => {
    const recipients = numbers(4) as [string, string, string, string];
    const errors = [
      [500, 20500, 'Internal Server Error'],
      [502, 20502, 'Bad Gateway'],
      [503, 20503, 'Service Unavailable'],
      [504, 20504, 'Gateway Timeout'],
    ] as const;
    // As Twilio may: the message is created, and the answer is still a 5xx.
    for (const [index, [status, code, message]] of errors.entries())
      peer.answer(recipients[index] as string, {
        kind: 'error',
        status,
        code,
        message,
        created: true,
      });
    const id = await sendThroughTwilio(recipients);
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 0,
      failed_count: 4,
    });
    for (const [index, recipient] of recipients.entries())
      expect(peer.createsTo(recipient).map((create) => create.status)).toEqual([
        errors[index]?.[0],
      ]);
    expect((await messageRows(stack, id)).map((row) => [row.status, row.error])).toEqual(
      errors.map(([, code, message]) => [
        'failed',
        `outcome unknown: Twilio error ${code}: ${message}`,
      ]),
    );
  });

  it('records a 21610 (the recipient replied STOP) as an opt-out and does not fail over', async () => {
    const [unsubscribed, other] = numbers(2) as [string, string];
    peer.answer(unsubscribed, {
      kind: 'error',
      status: 400,
      code: 21610,
      message: 'Attempt to send to unsubscribed recipient',
    });
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [unsubscribed, other],
        message: 'No failover for STOP',
        routing_type: 'failover',
        failover_route_slug: 'twilio-first',
      },
      { total: 2 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 1,
      failed_count: 1,
    });
    expect(peer.createsTo(unsubscribed).map((create) => create.status)).toEqual([400]);
    expect(await inbox(simulator.url, unsubscribed)).toEqual([]);
    expect((await messageRows(stack, id))[0]).toMatchObject({
      recipient: unsubscribed,
      status: 'failed',
      providerSlug: 'tw',
      error: 'tw: Twilio error 21610: Attempt to send to unsubscribed recipient',
    });
    expect(
      await stack.sql`
        select recipient, source from opt_outs
        where workspace_id = ${tenant.workspaceId} and recipient = ${unsubscribed}`,
      // The recipient replied STOP, to the Twilio number.
    ).toEqual([{ recipient: unsubscribed, source: 'reply' }]);
    peerMessageTo(other);
  });

  it('waits out a 429 Retry-After before creating again', async () => {
    const [recipient] = numbers(1) as [string];
    peer.answerNext(recipient, {
      kind: 'error',
      status: 429,
      code: 20429,
      message: 'Too Many Requests',
      retryAfter: '2',
    });
    const id = await sendThroughTwilio([recipient]);
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 1,
      failed_count: 0,
    });
    const [throttled, created] = peer.createsTo(recipient);
    expect([throttled?.status, created?.status]).toEqual([429, 201]);
    expect((created?.at ?? 0) - (throttled?.at ?? 0)).toBeGreaterThanOrEqual(2_000);
    peerMessageTo(recipient);
  });
});

describe('Twilio credentials at rest', () => {
  it('stores only ciphertext in the providers row', async () => {
    const [row] = await stack.sql<Record<string, unknown>[]>`
      select * from providers where workspace_id = ${tenant.workspaceId} and slug = 'tw'`;
    const credentials = row?.credentials as Uint8Array;
    expect(row).toMatchObject({ type: 'twilio', settings: { from: FROM, base_url: peer.url } });
    expect(Buffer.from(credentials)[0]).toBe(1);
    const text = JSON.stringify(row) + Buffer.from(credentials).toString('latin1');
    expect(text).not.toContain(AUTH_TOKEN);
    expect(text).not.toContain(ACCOUNT_SID);
    expect(
      decryptCredentials(
        inject('secret'),
        providerCredentialsContext(tenant.workspaceId, 'tw'),
        credentials,
      ),
    ).toEqual({ account_sid: ACCOUNT_SID, auth_token: AUTH_TOKEN });
  });

  it('`herald provider create --type twilio` never prints the auth token', async () => {
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
    const base = ['provider', 'create', '--workspace', tenant.slug, '--type', 'twilio'];
    const account = ['--account-sid', ACCOUNT_SID, '--auth-token', AUTH_TOKEN];
    const created = await runHeraldJson(
      [...base, '--slug', 'tw-cli', ...account, '--messaging-service-sid', `MG${'0'.repeat(32)}`],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toEqual({ id: expect.any(Number), slug: 'tw-cli' });
    const refused = await runHeraldJson([...base, '--slug', 'tw-bad', ...account], env);
    expect(refused.code).toBe(2);
    expect(refused.json).toEqual({
      error: {
        type: 'UsageError',
        message: 'Give --from or --messaging-service-sid (Twilio needs a sender)',
      },
    });
    for (const result of [created, refused])
      expect(result.stdout + result.stderr).not.toContain(AUTH_TOKEN);
  });
});
