/**
 * No false `paused` (issue 28, item 4): a send saved too late for its workflow start to be
 * confirmed answered 202 `paused` although Temporal was up. Here every save commits slowly (a
 * deferred trigger this file adds), as under load, and a burst of sends outruns the api: each is
 * answered 202 `queued`, or refused with 503 and Retry-After before anything is saved; none is
 * `paused`. The api has the production deadline (4.5 s) and pool size, the run's real Postgres,
 * Temporal and worker.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { addCredits } from '../../db/credits.js';
import { buildApp } from '../../server/app.js';
import { freePorts } from '../support/processes.js';
import { numbers } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

/** Campaigns whose reference starts so take this long to commit. */
const SLOW_COMMIT = 'admission-slow-';
const SLOW_COMMIT_S = 1.6;
const BURST = 30;

let stack: Stack;
let sql: Sql;
let tenant: Tenant;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 1_000);
  // The api's own pool, as large as a production api's (db/client.ts DEFAULT_POOL_SIZE).
  sql = createSql(inject('databaseUrl'));
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  app = buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql,
      temporal: stack.temporal,
    },
    { logger: false },
  );
  await app.listen({ host: '127.0.0.1', port });
  await stack.sql.unsafe(`
    create or replace function test_admission_slow_commit() returns trigger language plpgsql as $$
    begin perform pg_sleep(${SLOW_COMMIT_S}); return null; end $$;
    drop trigger if exists test_admission_slow_commit on campaigns;
    create constraint trigger test_admission_slow_commit after insert on campaigns
      deferrable initially deferred for each row
      when (new.reference like '${SLOW_COMMIT}%') execute function test_admission_slow_commit();`);
});

afterAll(async () => {
  await stack?.sql.unsafe(`
    drop trigger if exists test_admission_slow_commit on campaigns;
    drop function if exists test_admission_slow_commit();`);
  await app?.close();
  await sql?.end();
  await stack?.close();
});

async function send(reference: string) {
  const response = await fetch(`${baseUrl}/api/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipients: numbers(1), message: 'Admitted or refused', reference }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as {
    message: string;
    data?: { message: { id: number; status: string } };
  };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
}

describe('a burst of sends beyond what the api can confirm in time', { timeout: 60_000 }, () => {
  it('is answered 202 queued or 503 with Retry-After before saving, never paused', async () => {
    const burst = `${SLOW_COMMIT}${randomUUID()}-`;
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, index) => send(`${burst}${index}`)),
    );

    const paused = answers.filter((answer) => answer.body.data?.message.status === 'paused');
    expect(paused).toEqual([]);
    const queued = answers.filter((answer) => answer.status === 202);
    const refused = answers.filter((answer) => answer.status !== 202);
    for (const answer of queued) expect(answer.body.data?.message.status).toBe('queued');
    for (const answer of refused)
      expect(answer).toEqual({
        status: 503,
        retryAfter: '1',
        body: {
          message:
            'Herald is at capacity and did not save this send: retry after Retry-After seconds.',
        },
      });
    // The burst outran the api, and the api still took what it could confirm.
    expect(queued.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);

    // Refused sends saved nothing, even after their requests' work has settled.
    await new Promise((resolve) => setTimeout(resolve, 2 * SLOW_COMMIT_S * 1_000));
    const saved = await stack.sql<{ id: number; status: string }[]>`
      select id, status from campaigns
      where workspace_id = ${tenant.workspaceId} and reference like ${`${burst}%`}
      order by id`;
    const queuedIds = queued
      .map((answer) => answer.body.data?.message.id as number)
      .sort((a, b) => a - b);
    expect(saved.map((campaign) => campaign.id)).toEqual(queuedIds);
    expect(saved.every((campaign) => campaign.status !== 'paused')).toBe(true);
  });
});
