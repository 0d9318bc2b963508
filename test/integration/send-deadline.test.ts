/**
 * A send caught by the request deadline answers the truth (issue: a keyless send answered 503 was
 * sent anyway, and its retry sent it twice). A 503 before the save commits means nothing was
 * saved, ever; a deadline that comes while the save commits names the campaign it may have saved.
 * The api here has a 1 s deadline and the run's real Postgres, Temporal and worker.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { addCredits } from '../../db/credits.js';
import { OUTAGE_RETRY_AFTER_S } from '../../domain/errors.js';
import { buildApp } from '../../server/app.js';
import { freePorts } from '../support/processes.js';
import { inbox, lookup, numbers } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const DEADLINE_MS = 1_000;
/** Campaigns whose reference starts so commit slowly (a deferred trigger this file adds). */
const SLOW_COMMIT = 'slow-commit-';
const SLOW_COMMIT_S = 2;

let stack: Stack;
let tenant: Tenant;
let app: FastifyInstance;
let baseUrl: string;
const simulatorUrl = inject('simulatorUrl');

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL });
  app = buildApp(
    {
      env,
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql: stack.sql,
      temporal: stack.temporal,
    },
    { logger: false, requestDeadlineMs: DEADLINE_MS },
  );
  await app.listen({ host: '127.0.0.1', port });
  // Runs at COMMIT, for this file's campaigns only: the commit is in flight for SLOW_COMMIT_S.
  await stack.sql.unsafe(`
    create or replace function test_slow_commit() returns trigger language plpgsql as $$
    begin perform pg_sleep(${SLOW_COMMIT_S}); return null; end $$;
    drop trigger if exists test_slow_commit on campaigns;
    create constraint trigger test_slow_commit after insert on campaigns
      deferrable initially deferred for each row
      when (new.reference like '${SLOW_COMMIT}%') execute function test_slow_commit();
    drop trigger if exists test_slow_commit on otp_requests;
    create constraint trigger test_slow_commit after insert on otp_requests
      deferrable initially deferred for each row
      when (new.purpose like '${SLOW_COMMIT}%') execute function test_slow_commit();`);
});

afterAll(async () => {
  await stack?.sql.unsafe(`
    drop trigger if exists test_slow_commit on campaigns;
    drop trigger if exists test_slow_commit on otp_requests;
    drop function if exists test_slow_commit();`);
  await app?.close();
  await stack?.close();
});

async function send(body: unknown, path = '/api/v1/messages') {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** Holds the tenant's workspace row: a campaign's insert (its foreign key) and an OTP's charge wait. */
async function holdingWorkspace<T>(during: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holding = stack.sql.begin(async (tx) => {
    await tx`select id from workspaces where id = ${tenant.workspaceId} for update`;
    await released;
  });
  try {
    return await during();
  } finally {
    release();
    await holding;
  }
}

const campaignsWithReference = async (reference: string) =>
  stack.sql<{ id: number }[]>`
    select id from campaigns where workspace_id = ${tenant.workspaceId} and reference = ${reference}`;

describe('a send caught by the request deadline', { timeout: 60_000 }, () => {
  it('answers 503 before its save commits, and then saves and sends nothing', async () => {
    const recipients = numbers(3);
    const reference = `before-commit-${randomUUID()}`;
    const answer = await holdingWorkspace(() =>
      send({ recipients, message: 'Never twice', reference }),
    );

    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: { message: 'Service temporarily unavailable.' },
    });
    expect(answer.headers.get('retry-after')).toBe(String(OUTAGE_RETRY_AFTER_S));
    // The request has gone on past its answer: its save must roll back, not commit.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await campaignsWithReference(reference)).toEqual([]);
    for (const recipient of recipients) expect(await inbox(simulatorUrl, recipient)).toEqual([]);
  });

  it('names the campaign it may have saved when the deadline comes during the commit', async () => {
    const recipients = numbers(3);
    const reference = `${SLOW_COMMIT}${randomUUID()}`;
    const answer = await send({ recipients, message: 'Saved once', reference });

    // Answered while the commit was in flight; the commit then goes through.
    await expect
      .poll(() => campaignsWithReference(reference), { timeout: 2 * SLOW_COMMIT_S * 1_000 })
      .toHaveLength(1);
    const [{ id }] = (await campaignsWithReference(reference)) as unknown as [{ id: number }];
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: {
        message: `Service temporarily unavailable. Campaign ${id} may have been saved, and is then sent: look it up (GET /api/v1/messages/${id}) before retrying; retry only if it is not found.`,
      },
    });
    // It was saved, so it is sent, once, though its request ran out of time to dispatch it.
    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).status, {
        timeout: 40_000,
        interval: 250,
      })
      .toBe('completed');
    for (const recipient of recipients) {
      const received = await inbox(simulatorUrl, recipient);
      expect(received.map((message) => message.body)).toEqual(['Saved once']);
    }
  });

  it('answers 503 before an OTP request is saved, and then saves and sends no code', async () => {
    const [recipient] = numbers(1) as [string];
    const answer = await holdingWorkspace(() =>
      send({ recipient, purpose: 'login' }, '/api/v1/otp/send'),
    );
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: { message: 'Service temporarily unavailable.' },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await stack.sql`select id from otp_requests where recipient = ${recipient}`).toEqual([]);
    expect(await inbox(simulatorUrl, recipient)).toEqual([]);
  });

  it('names the OTP request it may have saved when the deadline comes during the commit', async () => {
    const [recipient] = numbers(1) as [string];
    const purpose = `${SLOW_COMMIT}${randomUUID()}`;
    const answer = await send({ recipient, purpose }, '/api/v1/otp/send');
    await expect
      .poll(() => stack.sql`select id from otp_requests where purpose = ${purpose}`, {
        timeout: 2 * SLOW_COMMIT_S * 1_000,
      })
      .toHaveLength(1);
    const [{ id }] = (await stack.sql`
      select id from otp_requests where purpose = ${purpose}`) as unknown as [{ id: string }];
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: {
        message: `Service temporarily unavailable. OTP request ${id} may have been saved: if its code arrives, verify it with this request_id; send again only if none arrives.`,
      },
    });
    // Saved late, its run is still started: the code arrives, once, and verifies by that id.
    await expect
      .poll(async () => (await inbox(simulatorUrl, recipient)).length, { timeout: 20_000 })
      .toBe(1);
    const [sms] = await inbox(simulatorUrl, recipient);
    const code = /\d{6}/.exec(sms?.body ?? '')?.[0];
    const verified = await send({ recipient, code, request_id: id }, '/api/v1/otp/verify');
    expect(verified.status).toBe(200);
  });
});
