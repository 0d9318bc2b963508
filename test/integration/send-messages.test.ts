import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { insertFailoverRoute, insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { buildApp } from '../../server/app.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
let rejecting: RunningSimulator;
const simulatorUrl = inject('simulatorUrl');

let numberSeed = Math.floor(Math.random() * 9_000_000);
/** Distinct valid Australian mobile numbers, so tests never read each other's inbox. */
function numbers(count: number): string[] {
  return Array.from({ length: count }, () => `+614${String(10_000_000 + numberSeed++).slice(-8)}`);
}

function send(body: unknown, headers: Record<string, string> = {}, app = stack.app) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: `Bearer ${tenant.token}`, ...headers },
    payload: body as object,
  });
}

async function lookup(id: number) {
  const response = await stack.app.inject({
    method: 'GET',
    url: `/api/v1/messages/${id}`,
    headers: { authorization: `Bearer ${tenant.token}` },
  });
  return response.json().data.message;
}

async function inbox(to: string): Promise<{ body: string }[]> {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  return ((await response.json()) as { messages: { body: string }[] }).messages;
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  rejecting = await startSimulator({ port: 0 });
  await fetch(`${rejecting.url}/v1/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ outcome: 'reject' }),
  });
  for (const [slug, url] of [
    ['primary', rejecting.url],
    ['backup', simulatorUrl],
  ] as const) {
    await insertProvider(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug,
      name: slug,
      type: 'simulator',
      requiresSenderId: false,
      settings: { base_url: url },
    });
  }
  await insertFailoverRoute(stack.sql, {
    workspaceId: tenant.workspaceId,
    slug: 'main',
    name: 'Main',
    providerSlugs: ['primary', 'backup'],
  });
});

afterAll(async () => {
  await rejecting.close();
  await stack.close();
});

describe('POST /api/v1/messages', () => {
  it('queues a campaign, submits each recipient once and completes it', async () => {
    const recipients = numbers(3);
    const response = await send({
      recipients,
      message: 'Your order shipped',
      reference: 'order-7',
    });
    expect(response.statusCode).toBe(202);
    const body = response.json();
    expect(body.data.message).toMatchObject({
      reference: 'order-7',
      status: 'queued',
      total_recipients: 3,
      queued_count: 3,
      sent_count: 0,
      failed_count: 0,
      completed_at: null,
    });
    expect(body.data.queue).toMatchObject({
      success: true,
      campaign_id: body.data.message.id,
      total_recipients: 3,
      requested_recipients: 3,
      excluded_recipients: 0,
    });
    expect(body.data.queue.batch_id).toMatch(/^[0-9a-f-]{36}$/);

    await expect
      .poll(() => lookup(body.data.message.id), { timeout: 20_000 })
      .toMatchObject({
        status: 'completed',
        queued_count: 0,
        sent_count: 3,
        failed_count: 0,
      });
    expect((await lookup(body.data.message.id)).completed_at).toEqual(expect.any(String));
    for (const recipient of recipients) {
      expect((await inbox(recipient)).map((message) => message.body)).toEqual([
        'Your order shipped',
      ]);
    }
  });

  it('replays the first answer byte for byte for the same key and body', async () => {
    const payload = { recipients: numbers(1), message: 'Replay me' };
    const first = await send(payload, { 'idempotency-key': `replay-${numberSeed}` });
    const second = await send(payload, { 'idempotency-key': `replay-${numberSeed}` });
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
  });

  it('replays a send after the provider it went to was disabled', async () => {
    const key = `disabled-${numberSeed}`;
    await insertProvider(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug: 'retiring',
      name: 'Retiring',
      type: 'simulator',
      requiresSenderId: false,
      settings: { base_url: simulatorUrl },
    });
    const payload = { recipients: numbers(1), message: 'Before', provider_slug: 'retiring' };
    const first = await send(payload, { 'idempotency-key': key });
    expect(first.statusCode).toBe(202);
    await stack.sql`
      update providers set active = false
      where workspace_id = ${tenant.workspaceId} and slug = 'retiring'`;
    const replay = await send(payload, { 'idempotency-key': key });
    expect(replay.statusCode).toBe(202);
    expect(replay.body).toBe(first.body);
  });

  it('answers 422 for the same key with a different body', async () => {
    const key = `mismatch-${numberSeed}`;
    expect(
      (await send({ recipients: numbers(1), message: 'A' }, { 'idempotency-key': key })).statusCode,
    ).toBe(202);
    const response = await send(
      { recipients: numbers(1), message: 'B' },
      { 'idempotency-key': key },
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'This Idempotency-Key was already used with a different request body.',
      errors: {
        'Idempotency-Key': ['This Idempotency-Key was already used with a different request body.'],
      },
    });
  });

  it('answers 409 with Retry-After (the lease left) while the same key is processing', async () => {
    const key = `busy-${numberSeed}`;
    const payload = { recipients: numbers(1), message: 'Busy' };
    await stack.sql`
      insert into idempotency_keys (workspace_id, endpoint, key, request_hash, status, locked_until, expires_at)
      values (${tenant.workspaceId}, 'POST /api/v1/messages', ${key},
              ${(await import('../../commands/requests/idempotency.js')).requestHash(payload)},
              'processing', now() + interval '1 minute', now() + interval '1 day')`;
    const response = await send(payload, { 'idempotency-key': key });
    expect(response.statusCode).toBe(409);
    expect(response.headers['retry-after']).toBe('60');
    expect(response.json()).toEqual({
      message:
        'A request with this Idempotency-Key is still being processed. Retry with the same key shortly.',
    });
  });

  it('answers 422 in the documented shape for invalid input', async () => {
    const response = await send({ recipients: ['0412 345 678'], message: '' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'The recipients.0 field must be a valid E.164 phone number. (and 1 more error)',
      errors: {
        'recipients.0': ['The recipients.0 field must be a valid E.164 phone number.'],
        message: ['The message field is required.'],
      },
    });
  });

  it('answers 422 for a provider the workspace does not have', async () => {
    const response = await send({ recipients: numbers(1), message: 'Hi', provider_slug: 'nope' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'The selected provider slug is invalid.',
      errors: { provider_slug: ['The selected provider slug is invalid.'] },
    });
  });

  it('fails over to the next provider when the first rejects', async () => {
    const [recipient] = numbers(1) as [string];
    const response = await send({
      recipients: [recipient],
      message: 'Failover',
      routing_type: 'failover',
      failover_route_slug: 'main',
    });
    expect(response.statusCode).toBe(202);
    const id = response.json().data.message.id;
    await expect
      .poll(() => lookup(id), { timeout: 20_000 })
      .toMatchObject({ status: 'completed', sent_count: 1 });
    const [row] = await stack.sql<{ providerSlug: string }[]>`
      select provider_slug from campaign_messages where campaign_id = ${id}`;
    expect(row?.providerSlug).toBe('backup');
    expect(await inbox(recipient)).toHaveLength(1);
  });

  it('saves the campaign as paused when Temporal is unreachable, and a retry resumes it', async () => {
    const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL });
    const deadTemporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
    const offline = buildApp(
      {
        env,
        publicUrl: PUBLIC_URL,
        secret: inject('secret'),
        sql: stack.sql,
        temporal: deadTemporal,
      },
      { logger: false },
    );
    const key = `paused-${numberSeed}`;
    const payload = { recipients: numbers(2), message: 'Eventually' };
    const paused = await send(payload, { 'idempotency-key': key }, offline);
    await offline.close();
    expect(paused.statusCode).toBe(202);
    const pausedBody = paused.json();
    expect(pausedBody.data.message).toMatchObject({ status: 'paused', total_recipients: 2 });
    expect(Object.keys(pausedBody.data.queue).sort()).toEqual([
      'campaign_id',
      'message',
      'success',
    ]);
    expect(pausedBody.data.queue.success).toBe(false);

    const resumed = await send(payload, { 'idempotency-key': key });
    expect(resumed.statusCode).toBe(202);
    expect(resumed.json().data.queue).toMatchObject({
      success: true,
      campaign_id: pausedBody.data.message.id,
    });
    await expect
      .poll(() => lookup(pausedBody.data.message.id), { timeout: 20_000 })
      .toMatchObject({ status: 'completed', sent_count: 2 });
  });
});
