import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { parseEnv } from '../../config/env.js';
import { addCredits, creditBalance } from '../../db/credits.js';
import { deleteOtpService, insertOtpService } from '../../db/otp-settings.js';
import { buildApp } from '../../server/app.js';
import { otpWorkflowId } from '../../workflows/definitions.js';
import { receiptSignature } from '../support/receipts.js';
import { simulatorProvider } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FAILED = { message: 'The code is invalid or has expired.' };

let stack: Stack;
let tenant: Tenant;
let numberSeed = Math.floor(Math.random() * 9_000_000);
/** A fresh Australian mobile per test, under +6143 so no other file reads its inbox. */
const mobile = () => `+6143${String(1_000_000 + numberSeed++).slice(-7)}`;

function post(url: string, payload: object, headers: Record<string, string> = {}, app = stack.app) {
  return app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${tenant.token}`, ...headers },
    payload,
  });
}
const send = (payload: object, headers?: Record<string, string>) =>
  post('/api/v1/otp/send', payload, headers);
const verify = (payload: object) => post('/api/v1/otp/verify', payload);

/** The codes the simulator's "phone" received, newest first. */
async function codesSentTo(to: string): Promise<string[]> {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  const { messages } = (await response.json()) as { messages: { body: string }[] };
  return messages.map((message) => /(\d{6,8})/.exec(message.body)?.[1] ?? message.body);
}

/** The api wired to the real Postgres and a Temporal that is not there. */
function offlineApp() {
  return buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql: stack.sql,
      temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    },
    { logger: false },
  );
}

/** History JSON with every base64 payload decoded, so a plaintext search sees inside them. */
function readable(historyJson: string): string {
  const decoded = [...historyJson.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map(([, data]) =>
    Buffer.from(data as string, 'base64').toString('utf8'),
  );
  return [historyJson, ...decoded].join('\n');
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
});

afterAll(async () => {
  await stack.close();
});

describe('POST /api/v1/otp/send', () => {
  it('submits a six-digit code and answers accepted with the request', async () => {
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login' });
    expect(response.statusCode).toBe(202);
    const body = response.json();
    expect(body).toEqual({
      message: 'Verification code sent.',
      data: {
        request_id: expect.stringMatching(UUID),
        status: 'accepted',
        expires_at: expect.any(String),
        provider: 'own',
        sender_id: null,
        billing: { source: 'credits', settlement_status: 'settled', credits_charged: 1 },
      },
    });
    const lifetime = Date.parse(body.data.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(4 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(5 * 60_000);
    const [code] = await codesSentTo(recipient);
    expect(code).toMatch(/^\d{6}$/);
    expect((await verify({ recipient, code, request_id: body.data.request_id })).json()).toEqual({
      message: 'The code is verified.',
    });
  });
});

describe('POST /api/v1/otp/send idempotency', () => {
  it('replays the first answer for the same key without sending again', async () => {
    const recipient = mobile();
    const key = `otp-replay-${numberSeed}`;
    const first = await send({ recipient, purpose: 'login' }, { 'idempotency-key': key });
    const second = await send({ recipient, purpose: 'login' }, { 'idempotency-key': key });
    expect(second.statusCode).toBe(202);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await codesSentTo(recipient)).toHaveLength(1);
  });

  it('answers pending when Temporal is unreachable, and a retry with the key sends once', async () => {
    const offline = offlineApp();
    const recipient = mobile();
    const key = `otp-pending-${numberSeed}`;
    const payload = { recipient, purpose: 'login' };
    const pending = await post('/api/v1/otp/send', payload, { 'idempotency-key': key }, offline);
    await offline.close();
    expect(pending.statusCode).toBe(202);
    expect(pending.json().data).toMatchObject({
      status: 'pending',
      billing: { source: 'credits', settlement_status: 'pending', credits_charged: 1 },
    });
    expect(await codesSentTo(recipient)).toEqual([]);

    const retried = await send(payload, { 'idempotency-key': key });
    expect(retried.json().data).toMatchObject({
      request_id: pending.json().data.request_id,
      status: 'accepted',
    });
    const again = await send(payload, { 'idempotency-key': key });
    expect(again.body).toBe(retried.body);
    expect(await codesSentTo(recipient)).toHaveLength(1);
  });
});

describe('daily maintenance', () => {
  it('fails and refunds a request whose code expired before it was ever submitted', async () => {
    const offline = offlineApp();
    const recipient = mobile();
    const before = (await creditBalance(stack.sql, tenant.workspaceId)).balance;
    const pending = await post('/api/v1/otp/send', { recipient, purpose: 'login' }, {}, offline);
    await offline.close();
    const { request_id } = pending.json().data;
    expect(pending.json().data.status).toBe('pending');
    expect((await creditBalance(stack.sql, tenant.workspaceId)).balance).toBe(before - 1);

    await stack.sql`
      update otp_requests set expires_at = now() - interval '1 second' where id = ${request_id}`;
    const { failUnsentOtpRequests } = createMaintenanceActivities({ sql: stack.sql });
    expect(await failUnsentOtpRequests({ batchSize: 1000 })).toBeGreaterThanOrEqual(1);
    const [row] = await stack.sql<{ status: string }[]>`
      select status from otp_requests where id = ${request_id}`;
    expect(row?.status).toBe('failed');
    expect((await creditBalance(stack.sql, tenant.workspaceId)).balance).toBe(before);
    expect(await codesSentTo(recipient)).toEqual([]);
  });
});

describe('POST /api/v1/otp/send when the provider times out', () => {
  it('answers pending, and a retry with the key reports accepted without a second SMS', {
    timeout: 60_000,
  }, async () => {
    // Accepts, then answers after the adapter's 10 s timeout: the outcome is unknown until
    // the workflow looks the submission up by its reference.
    const slow = await simulatorProvider(stack, tenant.workspaceId, 'slow', {
      behaviour: { outcome: 'timeout', timeout_ms: 12_000, receipt: { outcome: 'none' } },
    });
    try {
      const recipient = mobile();
      const key = `otp-timeout-${numberSeed}`;
      const payload = { recipient, purpose: 'login', provider_slug: 'slow' };
      const first = await send(payload, { 'idempotency-key': key });
      expect(first.statusCode).toBe(202);
      expect(first.json().data).toMatchObject({ status: 'pending', provider: 'slow' });

      await expect
        .poll(async () => (await send(payload, { 'idempotency-key': key })).json().data, {
          timeout: 30_000,
          interval: 1_000,
        })
        .toMatchObject({ request_id: first.json().data.request_id, status: 'accepted' });
      const inbox = await fetch(`${slow.url}/v1/inbox?to=${encodeURIComponent(recipient)}`);
      expect(((await inbox.json()) as { messages: unknown[] }).messages).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });
});

describe('POST /api/v1/otp/send idempotency across edits', () => {
  it('replays a send after its service was deleted', async () => {
    const service = await insertOtpService(stack.sql, tenant.workspaceId, {
      name: 'Sign-in',
      purpose: 'sign-in',
      codeLength: 7,
      expiresInMinutes: 3,
      templateSlug: null,
      messageTemplate: null,
      senderId: null,
      providerSlug: null,
    });
    const payload = { recipient: mobile(), service_slug: service.slug };
    const key = `otp-service-${numberSeed}`;
    const first = await send(payload, { 'idempotency-key': key });
    expect(first.json().data.status).toBe('accepted');
    await deleteOtpService(stack.sql, tenant.workspaceId, service.slug);
    const replay = await send(payload, { 'idempotency-key': key });
    expect(replay.statusCode).toBe(202);
    expect(replay.body).toBe(first.body);
  });

  it('does not spend a key on a refused request', async () => {
    const key = `otp-refused-${numberSeed}`;
    const recipient = mobile();
    const refused = await send(
      { recipient, purpose: 'login', provider_slug: 'nowhere' },
      { 'idempotency-key': key },
    );
    expect(refused.statusCode).toBe(422);
    const corrected = await send({ recipient, purpose: 'login' }, { 'idempotency-key': key });
    expect(corrected.statusCode).toBe(202);
    expect(corrected.json().data.status).toBe('accepted');
  });
});

describe('POST /api/v1/otp/verify', () => {
  it('accepts a code once only', async () => {
    const recipient = mobile();
    const { request_id } = (await send({ recipient, purpose: 'login' })).json().data;
    const [code] = await codesSentTo(recipient);
    expect((await verify({ recipient, code, request_id })).statusCode).toBe(200);
    const again = await verify({ recipient, code, request_id });
    expect(again.statusCode).toBe(422);
    expect(again.json()).toEqual(FAILED);
  });

  it('accepts a correct code for the latest request of a purpose', async () => {
    const recipient = mobile();
    await send({ recipient, purpose: 'checkout' });
    const [code] = await codesSentTo(recipient);
    expect((await verify({ recipient, code, purpose: 'login' })).json()).toEqual(FAILED);
    expect((await verify({ recipient, code, purpose: 'checkout' })).statusCode).toBe(200);
  });

  it('rejects a code once a newer one was sent for the same recipient and purpose', async () => {
    const recipient = mobile();
    const first = (await send({ recipient, purpose: 'login' })).json().data.request_id;
    const [firstCode] = await codesSentTo(recipient);
    const second = (await send({ recipient, purpose: 'login' })).json().data.request_id;
    const [secondCode] = await codesSentTo(recipient);
    const stale = await verify({ recipient, code: firstCode, request_id: first });
    expect(stale.statusCode).toBe(422);
    expect(stale.json()).toEqual(FAILED);
    expect((await verify({ recipient, code: secondCode, request_id: second })).statusCode).toBe(
      200,
    );
  });

  it('keeps the earlier code working when the provider refuses the newer one', async () => {
    const refuser = await simulatorProvider(stack, tenant.workspaceId, 'refuser', {
      behaviour: { outcome: 'reject' },
    });
    try {
      const recipient = mobile();
      await send({ recipient, purpose: 'login' });
      const [code] = await codesSentTo(recipient);
      const refused = await send({ recipient, purpose: 'login', provider_slug: 'refuser' });
      expect(refused.json().data.status).toBe('failed');
      // By purpose, the refused request is passed over for the one that went out.
      expect((await verify({ recipient, code, purpose: 'login' })).statusCode).toBe(200);
    } finally {
      await refuser.close();
    }
  });

  it('locks out after five failures in 15 minutes, and a resend does not reset the count', async () => {
    const recipient = mobile();
    const { request_id } = (await send({ recipient, purpose: 'login' })).json().data;
    const [code] = (await codesSentTo(recipient)) as [string];
    const wrong = code === '000000' ? '111111' : '000000';
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await verify({ recipient, code: wrong, request_id })).json()).toEqual(FAILED);
    }
    const exhausted = await verify({ recipient, code, request_id });
    expect(exhausted.statusCode).toBe(422);
    expect(exhausted.json()).toEqual(FAILED);

    const resent = (await send({ recipient, purpose: 'login' })).json().data.request_id;
    const [newCode] = await codesSentTo(recipient);
    expect((await verify({ recipient, code: newCode, request_id: resent })).json()).toEqual(FAILED);
    // Another purpose has its own count.
    await send({ recipient, purpose: 'reset' });
    const [resetCode] = await codesSentTo(recipient);
    expect((await verify({ recipient, code: resetCode, purpose: 'reset' })).statusCode).toBe(200);
  });

  it('answers an unknown request exactly as a wrong code', async () => {
    const recipient = mobile();
    const unknown = await verify({
      recipient,
      code: '123456',
      request_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toBe(JSON.stringify(FAILED));
  });

  it('verifies once when two correct submissions race', async () => {
    const recipient = mobile();
    const { request_id } = (await send({ recipient, purpose: 'login' })).json().data;
    const [code] = await codesSentTo(recipient);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => verify({ recipient, code, request_id })),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([
      200, 422, 422, 422, 422, 422, 422, 422,
    ]);
  });

  it('keeps the plaintext code out of Temporal history and the database', async () => {
    const recipient = mobile();
    const key = `otp-secret-${numberSeed}`;
    const { request_id } = (
      await send({ recipient, purpose: 'login' }, { 'idempotency-key': key })
    ).json().data;
    const [code] = (await codesSentTo(recipient)) as [string];
    const handle = stack.temporal.workflow.getHandle(
      otpWorkflowId(tenant.workspaceId, null, request_id),
    );
    const history = readable(JSON.stringify(await handle.fetchHistory()));
    expect(history).toContain(request_id);
    expect(history).not.toContain(code);
    const [row] = await stack.sql`select * from otp_requests where id = ${request_id}`;
    expect(JSON.stringify(row)).not.toContain(code);
    const idempotency = await stack.sql`select * from idempotency_keys where key = ${key}`;
    expect(JSON.stringify(idempotency)).not.toContain(code);
  });

  it('records the delivery receipt the provider posts for a code', async () => {
    const recipient = mobile();
    const { request_id } = (await send({ recipient, purpose: 'login' })).json().data;
    const [row] = await stack.sql<{ providerMessageId: string }[]>`
      select provider_message_id from otp_requests where id = ${request_id}`;
    const at = '2026-11-22T01:02:03.456Z';
    const fields = {
      id: row?.providerMessageId as string,
      reference: `otp-${request_id}`,
      status: 'undelivered',
      error_code: 'EC_ABSENT',
      at,
    };
    const receipt = await stack.app.inject({
      method: 'POST',
      url: '/webhooks/providers/own',
      headers: receiptSignature(tenant.workspaceId, 'own', fields),
      payload: fields,
    });
    expect(receipt.statusCode).toBe(204);
    const [delivery] = await stack.sql<
      { deliveryStatus: string; deliveryErrorCode: string; deliveredAt: Date }[]
    >`
      select delivery_status, delivery_error_code, delivered_at from otp_requests where id = ${request_id}`;
    expect(delivery).toEqual({
      deliveryStatus: 'undelivered',
      deliveryErrorCode: 'EC_ABSENT',
      deliveredAt: new Date(at),
    });
  });

  it('keeps the ledger and the balance in agreement', async () => {
    const { balance, ledgerSum } = await creditBalance(stack.sql, tenant.workspaceId);
    expect(balance).toBe(ledgerSum);
  });
});
