/**
 * A send answered `paused` (Temporal unreachable) is sent by Herald itself once Temporal is back,
 * exactly once, with or without an Idempotency-Key: the worker's sweeper dispatches it
 * (commands/messaging/dispatch-paused.ts). `herald campaign resume` dispatches one from any door, and a
 * campaign left paused past its validity is closed by its run with every message failed unsent.
 */
import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { campaignResume } from '../../cli/admin/campaigns.js';
import { parseEnv } from '../../config/env.js';
import { buildApp } from '../../server/app.js';
import { inbox, lookup, numbers } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
/** The api as it is while Temporal cannot be reached. */
let offline: FastifyInstance;
const simulatorUrl = inject('simulatorUrl');
/** The sweeper's grace (10 s) and interval (5 s), and the campaign's run. */
const SENT_BY_HERALD_MS = 40_000;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  const deadTemporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  offline = buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql: stack.sql,
      temporal: deadTemporal,
    },
    { logger: false },
  );
  await offline.ready();
});

afterAll(async () => {
  await offline?.close();
  await stack?.close();
});

async function sendOffline(body: object, headers: Record<string, string> = {}) {
  const response = await offline.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: `Bearer ${tenant.token}`, ...headers },
    payload: body,
  });
  expect(response.statusCode).toBe(202);
  const answer = response.json();
  expect(answer.data.queue.success).toBe(false);
  expect(answer.data.message.status).toBe('paused');
  return answer as { data: { message: { id: number }; queue: { message: string } } };
}

async function sentOnceEach(recipients: string[], body: string) {
  for (const recipient of recipients) {
    const received = await inbox(simulatorUrl, recipient);
    expect(received.map((message) => message.body)).toEqual([body]);
  }
}

const untilCompleted = (id: number) =>
  expect
    .poll(async () => (await lookup(stack, tenant.token, id)).status, {
      timeout: SENT_BY_HERALD_MS,
      interval: 250,
    })
    .toBe('completed');

describe('a campaign left paused', { timeout: 90_000 }, () => {
  it('is sent by Herald once Temporal is back, when its send had no Idempotency-Key', async () => {
    const recipients = numbers(3);
    const answer = await sendOffline({ recipients, message: 'Keyless, once' });
    expect(answer.data.queue.message).toBe(
      'Dispatch could not be confirmed; Herald dispatches the campaign once it can. Do not send it again.',
    );
    await untilCompleted(answer.data.message.id);
    expect(await lookup(stack, tenant.token, answer.data.message.id)).toMatchObject({
      sent_count: 3,
      failed_count: 0,
    });
    await sentOnceEach(recipients, 'Keyless, once');
  });

  it('is sent once when Herald and the retry with its key both dispatch it', async () => {
    const recipients = numbers(2);
    const body = { recipients, message: 'Keyed, once' };
    const key = `paused-${randomUUID()}`;
    const paused = await sendOffline(body, { 'idempotency-key': key });
    const id = paused.data.message.id;
    await untilCompleted(id);
    const retried = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${tenant.token}`, 'idempotency-key': key },
      payload: body,
    });
    expect(retried.statusCode).toBe(202);
    expect(retried.json().data.queue).toMatchObject({ success: true, campaign_id: id });
    await sentOnceEach(recipients, 'Keyed, once');
  });

  it('is dispatched by `herald campaign resume` though it came through the API', async () => {
    const recipients = numbers(2);
    const paused = await sendOffline({ recipients, message: 'Resumed, once' });
    const id = paused.data.message.id;
    const admin = {
      ...stack.admin,
      env: parseEnv({ LOG_LEVEL: 'silent', TEMPORAL_ADDRESS: inject('temporalAddress') }),
    };
    const resumed = await campaignResume(admin, { workspace: tenant.slug, id: String(id) });
    expect(resumed.json).toEqual({ id, status: 'queued' });
    // Its line written with the dispatch's record, by the OS user on this host.
    expect(
      await stack.sql`
        select actor, source, origin, details from audit_log
        where action = 'campaign.resumed' and target = ${`campaign #${id}`}`,
    ).toEqual([
      {
        actor: userInfo().username,
        source: 'cli',
        origin: `cli@${hostname()}`,
        details: { status: 'queued' },
      },
    ]);
    await untilCompleted(id);
    await sentOnceEach(recipients, 'Resumed, once');
  });

  it('past its validity period, is closed by its run with every message failed unsent', async () => {
    const recipients = numbers(2);
    const paused = await sendOffline({ recipients, message: 'Too late' });
    const id = paused.data.message.id;
    await stack.sql`update campaigns set valid_until = now() - interval '1 minute' where id = ${id}`;
    await untilCompleted(id);
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      queued_count: 0,
      sent_count: 0,
      failed_count: 2,
    });
    const errors = await stack.sql<{ error: string }[]>`
      select error from campaign_messages where campaign_id = ${id}`;
    expect(errors.map((row) => row.error)).toEqual([
      'validity period ended before it could be submitted',
      'validity period ended before it could be submitted',
    ]);
    for (const recipient of recipients) expect(await inbox(simulatorUrl, recipient)).toEqual([]);
  });
});
