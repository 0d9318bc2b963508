/**
 * Slow clients cannot hold the api (issue 24 item 3): a body trickled a byte at a time, headers
 * trickled, a connection that says nothing, too many connections from one address. The api runs
 * on loopback with short timeouts; slow clients come from 127.0.0.2 and .3, everyone else from
 * 127.0.0.1, whose health checks and sends must still be answered within a second.
 */
import { type AddressInfo, connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { buildApp } from '../../server/app.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { numbers } from '../support/send.js';
import { createTenant, type Tenant } from '../support/stack.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_500;
/** Shorter than the request timeout, as the 4.5 s deadline is than the 10 s default. */
const DEADLINE_MS = 1_000;
/** Node looks for expired requests every quarter of the headers timeout (at most 1 s). */
const CHECK_INTERVAL_MS = HEADERS_TIMEOUT_MS / 4;
/** Timers on a machine other tests keep busy. */
const SLACK_MS = 750;
const PUBLIC_URL = 'http://herald.test';

let sql: Sql;
let closeTemporal: () => Promise<void>;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  sql = createSql(inject('databaseUrl'), { max: 4 });
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await closeTemporal?.();
  await sql?.end();
});

/** The api with these variables on top of the test timeouts, listening on 127.0.0.1. */
async function listeningApi(variables: Record<string, string> = {}) {
  const env = parseEnv({
    LOG_LEVEL: 'silent',
    PUBLIC_URL,
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    ...variables,
  });
  const temporal = await connectTemporalClient(inject('temporalAddress'), 'default');
  const previous = closeTemporal;
  closeTemporal = async () => {
    await previous?.();
    await temporal.connection.close();
  };
  const app = buildApp(
    { env, publicUrl: PUBLIC_URL, secret: inject('secret'), sql, temporal },
    { logger: false, requestDeadlineMs: DEADLINE_MS },
  );
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { app, env, port, url: `http://127.0.0.1:${port}` };
}

interface SlowClient {
  /** What the api wrote back (its status line first), as text. */
  received(): string;
  /** Resolves with ms from the first byte sent to the close. */
  closed: Promise<number>;
  destroy(): void;
}

/**
 * A connection from `from` that sends `head` (if any) and then `drip` every 200 ms, until the
 * api closes it.
 */
function slowClient(port: number, from: string, head: string, drip: string): SlowClient {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  let received = '';
  let started = 0;
  let dripping: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    started = Date.now();
    if (head) socket.write(head);
    if (drip) dripping = setInterval(() => socket.write(drip), 200);
  });
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      clearInterval(dripping);
      resolve(Date.now() - started);
    }),
  );
  return { received: () => received, closed, destroy: () => socket.destroy() };
}

const bodyHead = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: herald.test\r\nContent-Type: application/json\r\n` +
  'Content-Length: 100000\r\n\r\n{"recipients":["';

const statusOf = (answer: string) => answer.split('\r\n')[0] ?? '';

describe('slow clients', { timeout: 60_000 }, () => {
  let tenant: Tenant;

  it('50 slow bodies from one address are cut off while others are answered within 1 s', async () => {
    const { env, port, url } = await listeningApi();
    tenant = await createTenant({ env, secret: inject('secret'), sql });
    const send = async () => {
      const started = Date.now();
      const response = await fetch(`${url}/api/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipients: numbers(1), message: 'Hello' }),
      });
      await response.arrayBuffer();
      return { status: response.status, ms: Date.now() - started };
    };
    const health = async () => {
      const started = Date.now();
      const response = await fetch(`${url}/health`);
      await response.arrayBuffer();
      return { status: response.status, ms: Date.now() - started };
    };
    // The first calls warm the pools up (connections to Postgres and Temporal).
    expect((await send()).status).toBe(202);
    expect((await health()).status).toBe(200);

    // Unauthenticated sends are refused before their body (401), a receipt waits for its body
    // (the deadline's 503): either way the rest of the body keeps the connection, until cut off.
    const slow = Array.from({ length: 50 }, (_, index) =>
      slowClient(
        port,
        '127.0.0.2',
        bodyHead(index % 2 === 0 ? '/api/v1/messages' : '/webhooks/providers/own'),
        '1',
      ),
    );
    const answered: { status: number; ms: number }[] = [];
    let slowOpen = true;
    const allClosed = Promise.all(slow.map((client) => client.closed)).finally(() => {
      slowOpen = false;
    });
    while (slowOpen) {
      answered.push(await health(), await send());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const lifetimes = await allClosed;

    expect(answered.length).toBeGreaterThanOrEqual(6);
    expect(
      answered.filter(({ status, ms }) => !([200, 202].includes(status) && ms < 1_000)),
    ).toEqual([]);
    expect(Math.max(...lifetimes)).toBeLessThanOrEqual(
      REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + SLACK_MS,
    );
    // Nothing cut them off before the request timeout, and each got its answer first.
    expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    const statuses = slow.map((client) => statusOf(client.received()));
    expect(statuses.filter((_status, index) => index % 2 === 0)).toEqual(
      Array(25).fill('HTTP/1.1 401 Unauthorized'),
    );
    expect(statuses.filter((_status, index) => index % 2 === 1)).toEqual(
      Array(25).fill('HTTP/1.1 503 Service Unavailable'),
    );
    // One answer each: no 408 written after it when the request timeout closed the connection.
    expect(slow.map((client) => client.received().split('HTTP/1.1 ').length - 1)).toEqual(
      Array(50).fill(1),
    );
  });

  it('closes a connection that sends nothing, or its headers too slowly, within the headers timeout', async () => {
    const { port } = await listeningApi();
    const silent = slowClient(port, '127.0.0.2', '', '');
    const trickling = slowClient(port, '127.0.0.2', 'GET /health HTTP/1.1\r\n', 'X: y\r\n');
    const limit = HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + SLACK_MS;
    expect(await silent.closed).toBeLessThanOrEqual(limit);
    expect(silent.received()).toBe('');
    expect(await trickling.closed).toBeLessThanOrEqual(limit);
    expect(statusOf(trickling.received())).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('caps the connections of one address, but not those of a trusted proxy', async () => {
    const { port, url } = await listeningApi({
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '5',
      TRUSTED_PROXIES: '127.0.0.3',
    });
    const head = 'GET /health HTTP/1.1\r\nHost: herald.test\r\n';
    const capped = Array.from({ length: 8 }, () => slowClient(port, '127.0.0.2', head, ''));
    const proxied = Array.from({ length: 8 }, () => slowClient(port, '127.0.0.3', head, ''));
    const quickly = (client: SlowClient) =>
      Promise.race([
        client.closed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('open'), HEADERS_TIMEOUT_MS / 2)),
      ]);
    // Five held, three closed at once and unanswered; the proxy's eight all held.
    const outcomes = await Promise.all(capped.map(quickly));
    expect(outcomes.toSorted()).toEqual([...Array(3).fill('closed'), ...Array(5).fill('open')]);
    expect(capped.map((client) => client.received())).toEqual(Array(8).fill(''));
    expect(await Promise.all(proxied.map(quickly))).toEqual(Array(8).fill('open'));
    // Another address is served meanwhile.
    expect((await fetch(`${url}/health`)).status).toBe(200);
    for (const client of [...capped, ...proxied]) client.destroy();
  });
});
