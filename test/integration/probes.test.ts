/**
 * The api's probes (issue 26, item 4): `/livez` asks nothing of the dependencies, `/readyz` asks
 * Postgres, Temporal and the database's migrations, each named when it is why.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { buildApp } from '../../server/app.js';
import { openStack, PUBLIC_URL, type Stack } from '../support/stack.js';

let stack: Stack;
const opened: { app: ReturnType<typeof buildApp>; sql: Sql }[] = [];

/** An api over the given database and Temporal client. */
function appWith(databaseUrl: string, temporal: Client) {
  const sql = createSql(databaseUrl, { max: 2 });
  const app = buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql,
      temporal,
    },
    { logger: false },
  );
  opened.push({ app, sql });
  return app;
}

const probe = async (app: ReturnType<typeof buildApp>, url: string) => {
  const response = await app.inject({ method: 'GET', url });
  return [response.statusCode, response.json()];
};

beforeAll(async () => {
  stack = await openStack();
});

afterAll(async () => {
  for (const { app, sql } of opened) {
    await app.close();
    await sql.end({ timeout: 1 });
  }
  await stack.close();
});

describe('probes', () => {
  it('answers ready with every dependency up and every migration applied', async () => {
    expect(await probe(stack.app, '/livez')).toEqual([200, { status: 'ok' }]);
    expect(await probe(stack.app, '/readyz')).toEqual([
      200,
      { status: 'ready', checks: { postgres: 'up', temporal: 'up', migrations: 'current' } },
    ]);
  });

  it('is live but not ready while Postgres is away', async () => {
    const app = appWith('postgres://herald@127.0.0.1:1/herald', stack.temporal);
    expect(await probe(app, '/livez')).toEqual([200, { status: 'ok' }]);
    expect(await probe(app, '/readyz')).toEqual([
      503,
      {
        status: 'not_ready',
        message: 'Not ready: postgres down.',
        checks: { postgres: 'down', temporal: 'up', migrations: 'unknown' },
      },
    ]);
  });

  it('is live but not ready while Temporal is away', async () => {
    const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
    const app = appWith(inject('databaseUrl'), temporal);
    expect(await probe(app, '/livez')).toEqual([200, { status: 'ok' }]);
    expect(await probe(app, '/readyz')).toEqual([
      503,
      {
        status: 'not_ready',
        message: 'Not ready: temporal down.',
        checks: { postgres: 'up', temporal: 'down', migrations: 'current' },
      },
    ]);
  });

  it('is not ready on a database its migrations have not reached', async () => {
    const name = `probe_${randomBytes(4).toString('hex')}`;
    await stack.sql.unsafe(`create database ${name}`);
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const [status, body] = await probe(appWith(url.toString(), stack.temporal), '/readyz');
    expect(status).toBe(503);
    // Every migration the code has, in order, is named.
    const files = readdirSync(new URL('../../db/migrations/', import.meta.url))
      .filter((file) => file.endsWith('.sql'))
      .sort();
    expect(body).toEqual({
      status: 'not_ready',
      message: `Not ready: migrations pending: ${files.join(', ')}.`,
      checks: { postgres: 'up', temporal: 'up', migrations: 'behind' },
    });
  });
});
