/**
 * Orphan campaigns (db/orphan-campaigns.ts): what the REST send left behind before campaigns were
 * saved with their key in one transaction. Seeded here exactly as that send left them (its key
 * claimed, its campaign saved and never tied to the key, the retry's campaign holding the key),
 * then closed by the daily maintenance step without sending anything, while a campaign that is
 * paused for an ordinary reason (Temporal did not confirm its start) is left alone.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { requestHash } from '../../commands/requests/idempotency.js';
import { insertCampaign } from '../../db/campaigns.js';
import { buildApp } from '../../server/app.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
import {
  inbox,
  lookup,
  messageRows,
  numbers,
  queuedResponse,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const ENDPOINT = 'POST /api/v1/messages';
const run = randomBytes(4).toString('hex');

let stack: Stack;
let tenant: Tenant;
let apiKey: { id: number; token: string };

function send(payload: object, key: string, app = stack.app) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: `Bearer ${apiKey.token}`, 'idempotency-key': key },
    payload,
  });
}

/**
 * What the REST send did before 0011 when its api died between its two transactions, `age` ago:
 * the key claimed (its 30 s lease long over), the campaign saved untied to it. The retry with the
 * key, here and now, saves a second campaign that holds the key, and sends it.
 */
async function seedSupersededOrphan(age: string) {
  const key = `orphan-${age.replace(/\W/g, '')}-${run}`;
  const recipients = numbers(2);
  const payload = { recipients, message: `Sale ends ${age}`, reference: `ref-${run}` };
  await stack.sql`
    insert into idempotency_keys
      (workspace_id, endpoint, key, request_hash, status, locked_until, expires_at, created_at)
    values (${tenant.workspaceId}, ${ENDPOINT}, ${key}, ${requestHash(payload)}, 'processing',
            now() - ${age}::interval + interval '30 seconds', now() + interval '1 day',
            now() - ${age}::interval)`;
  const { id: orphan } = await insertCampaign(stack.sql, {
    workspaceId: tenant.workspaceId,
    apiKeyId: apiKey.id,
    reference: payload.reference,
    purpose: 'transactional',
    body: payload.message,
    senderId: null,
    routingType: 'direct',
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients,
  });
  await stack.sql`
    update campaigns set created_at = now() - ${age}::interval + interval '1 second'
    where id = ${orphan}`;
  const retried = await send(payload, key);
  expect(retried.statusCode).toBe(202);
  expect(retried.json()).toEqual(queuedResponse({ total: 2, reference: payload.reference }));
  const successor = retried.json().data.message.id as number;
  await waitForCompletion(stack, apiKey.token, successor);
  return { orphan, successor, recipients, key };
}

/** A paused campaign with no workflow recorded and its validity period over. */
async function seedLapsed() {
  const { id } = await insertCampaign(stack.sql, {
    workspaceId: tenant.workspaceId,
    apiKeyId: null,
    source: 'campaign',
    name: 'Never dispatched',
    reference: null,
    purpose: 'transactional',
    body: 'Too late',
    senderId: null,
    routingType: 'direct',
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients: numbers(1),
  });
  await stack.sql`
    update campaigns set created_at = now() - interval '25 hours',
      valid_until = now() - interval '1 hour'
    where id = ${id}`;
  return id;
}

/**
 * REST send with a key while Temporal cannot confirm the start: saved paused, the key released
 * for the retry. Read from the database, whatever the answer was (202 paused, or 503 if the
 * request's deadline came first: its handler still finishes).
 */
async function sendPaused() {
  const offline = buildApp(
    {
      env: stack.admin.env,
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql: stack.sql,
      temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    },
    { logger: false },
  );
  const key = `paused-${run}`;
  const recipients = numbers(2);
  const payload = { recipients, message: 'Temporal was away' };
  try {
    const answer = await send(payload, key, offline);
    expect([202, 503]).toContain(answer.statusCode);
    const [released] = await waitFor(
      () => stack.sql<{ resourceId: string }[]>`
        select resource_id from idempotency_keys
        where workspace_id = ${tenant.workspaceId} and endpoint = ${ENDPOINT} and key = ${key}
          and status = 'processing' and claim_token is null`,
    );
    const id = Number(released?.resourceId);
    expect(await campaignRow(id)).toEqual({ status: 'paused', completedAt: null });
    return { id, key, payload, recipients };
  } finally {
    await offline.close();
  }
}

/** Polls `query` until it returns rows. */
async function waitFor<T>(query: () => Promise<T[]>): Promise<T[]> {
  let rows: T[] = [];
  const count = async () => {
    rows = await query();
    return rows.length;
  };
  await expect.poll(count, { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
  return rows;
}

function resume(id: number) {
  return runHeraldJson(
    ['campaign', 'resume', '--workspace', tenant.slug, '--id', String(id)],
    heraldEnv({
      DATABASE_URL: inject('databaseUrl'),
      HERALD_SECRET: inject('secret'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    }),
  );
}

async function campaignRow(id: number) {
  const [row] = await stack.sql<{ status: string; completedAt: Date | null }[]>`
    select status, completed_at from campaigns where id = ${id}`;
  return row;
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  apiKey = await tenant.keyWith(['messages:send', 'messages:read']);
});

afterAll(async () => {
  await stack?.close();
});

describe('orphan campaigns', () => {
  it('are closed unsent by the daily step; an ordinary paused campaign is left to its retry', {
    timeout: 90_000,
  }, async () => {
    const superseded = await seedSupersededOrphan('2 hours');
    const recent = await seedSupersededOrphan('10 minutes');
    const lapsed = await seedLapsed();
    const paused = await sendPaused();

    // `campaign resume` refuses a superseded campaign, before and after it is closed.
    const refusal = (orphan: number, successor: number) => ({
      code: 2,
      json: {
        error: {
          type: 'UsageError',
          message: `Campaign ${orphan} was superseded by campaign ${successor}, saved for the same Idempotency-Key; it is never sent`,
        },
      },
    });
    const refused = await resume(superseded.orphan);
    expect({ code: refused.code, json: refused.json }).toEqual(
      refusal(superseded.orphan, superseded.successor),
    );

    const { closeOrphanCampaigns } = createMaintenanceActivities({ sql: stack.sql });
    await closeOrphanCampaigns({ batchSize: 1000 });

    // The superseded orphan: completed, every message failed with the reason, none sent.
    expect(await lookup(stack, apiKey.token, superseded.orphan)).toMatchObject({
      status: 'completed',
      total_recipients: 2,
      queued_count: 0,
      sent_count: 0,
      failed_count: 2,
      completed_at: expect.any(String),
    });
    for (const row of await messageRows(stack, superseded.orphan)) {
      expect(row).toMatchObject({
        status: 'failed',
        providerMessageId: null,
        error: `orphan: campaign ${superseded.successor} was saved for the same Idempotency-Key; closed unsent`,
      });
    }
    // Each recipient got the message once: from the retry's campaign, which is untouched.
    expect(await lookup(stack, apiKey.token, superseded.successor)).toMatchObject({
      status: 'completed',
      sent_count: 2,
      failed_count: 0,
    });
    for (const to of superseded.recipients) expect(await inbox(simulatorUrl, to)).toHaveLength(1);
    const closedRefused = await resume(superseded.orphan);
    expect({ code: closedRefused.code, json: closedRefused.json }).toEqual(
      refusal(superseded.orphan, superseded.successor),
    );

    // Superseded ten minutes ago: the request that saved it could in principle still be running.
    expect(await campaignRow(recent.orphan)).toEqual({ status: 'paused', completedAt: null });
    expect((await messageRows(stack, recent.orphan)).map((row) => [row.status, row.error])).toEqual(
      [
        ['queued', null],
        ['queued', null],
      ],
    );

    // Lapsed undispatched: closed with its own reason.
    expect(await campaignRow(lapsed)).toMatchObject({ status: 'completed' });
    expect((await messageRows(stack, lapsed)).map((row) => [row.status, row.error])).toEqual([
      ['failed', 'never dispatched before its validity period ended; closed unsent'],
    ]);

    // The ordinary paused campaign: not closed (the workers' sweeper may have dispatched it by
    // now), and its retry with the key finds it: sent once.
    expect((await messageRows(stack, paused.id)).map((row) => row.error)).toEqual([null, null]);
    const resumed = await send(paused.payload, paused.key);
    expect(resumed.statusCode).toBe(202);
    expect(resumed.json().data.queue).toMatchObject({ success: true, campaign_id: paused.id });
    expect(await waitForCompletion(stack, apiKey.token, paused.id)).toMatchObject({
      sent_count: 2,
      failed_count: 0,
    });
    for (const to of paused.recipients) expect(await inbox(simulatorUrl, to)).toHaveLength(1);

    // Closing again finds nothing more of these.
    await closeOrphanCampaigns({ batchSize: 1000 });
    expect(await campaignRow(recent.orphan)).toEqual({ status: 'paused', completedAt: null });
    expect((await messageRows(stack, superseded.orphan)).map((row) => row.status)).toEqual([
      'failed',
      'failed',
    ]);
  });

  it('is not what differs from the campaign holding the key: maintenance leaves it to `campaign resume`', async () => {
    // Same body and key holder, but saved after the key was claimed by a different request.
    const { orphan, successor } = await seedSupersededOrphan('3 hours');
    await stack.sql`
      update campaigns set reference = 'another request' where id = ${orphan}`;
    const { closeOrphanCampaigns } = createMaintenanceActivities({ sql: stack.sql });
    await closeOrphanCampaigns({ batchSize: 1000 });
    expect(await campaignRow(orphan)).toEqual({ status: 'paused', completedAt: null });
    expect(await campaignRow(successor)).toMatchObject({ status: 'completed' });
    // Not superseded: an operator may send it.
    const resumed = await resume(orphan);
    expect({ code: resumed.code, json: resumed.json }).toEqual({
      code: 0,
      json: { id: orphan, status: 'queued' },
    });
    expect(await waitForCompletion(stack, apiKey.token, orphan)).toMatchObject({
      sent_count: 2,
      failed_count: 0,
    });
  });
});
