/**
 * The api with a Postgres that cannot be reached (a port nothing listens on) and the run's real
 * Temporal: every REST, OAuth and MCP request is answered at once with 503, the catalogue's
 * message and Retry-After, never a 500; /health names Postgres. A request still running at the
 * deadline is answered 503, and its late result writes nothing more on the connection.
 */
import { connect } from 'node:net';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REQUEST_DEADLINE_MS } from '../../api/request-deadline.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { OUTAGE_RETRY_AFTER_S } from '../../domain/errors.js';
import { buildApp } from '../../server/app.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { freePorts } from '../support/processes.js';

const UNAVAILABLE = { message: 'Service temporarily unavailable.' };
/** Well formed, so that checking it takes a database lookup. */
const API_KEY = `hld_0a1b2c3d_${'x'.repeat(43)}`;
/** A route that answers after the deadline, added to the app under test; a POST with a body. */
const SLOW_ROUTE = '/test/slower-than-the-deadline';
const SLOW_ROUTE_MS = REQUEST_DEADLINE_MS + 1_500;

describe('the api while Postgres cannot be reached', { timeout: 30_000 }, () => {
  let sql: Sql;
  let temporal: Client;
  let app: FastifyInstance;
  let baseUrl: string;
  let lateResults = 0;

  beforeAll(async () => {
    const [port, deadPostgresPort] = (await freePorts(2)) as [number, number];
    baseUrl = `http://127.0.0.1:${port}`;
    const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL: baseUrl, MCP_ENABLED: 'true' });
    sql = createSql(`postgres://herald:secret@127.0.0.1:${deadPostgresPort}/herald`, { max: 2 });
    temporal = await connectTemporalClient(inject('temporalAddress'), 'default');
    app = buildApp({ env, publicUrl: baseUrl, secret: inject('secret'), sql, temporal });
    app.post(SLOW_ROUTE, async () => {
      await new Promise((resolve) => setTimeout(resolve, SLOW_ROUTE_MS));
      lateResults++;
      return { late: true };
    });
    await app.listen({ host: '127.0.0.1', port });
  });

  afterAll(async () => {
    await app?.close();
    await temporal?.connection.close();
    await sql?.end({ timeout: 1 });
  });

  async function timed(path: string, init: RequestInit = {}) {
    const started = Date.now();
    const response = await fetch(`${baseUrl}${path}`, {
      ...init,
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.json();
    return { response, body, ms: Date.now() - started };
  }

  const requests: [string, string, RequestInit][] = [
    [
      'REST: look a campaign up',
      '/api/v1/messages/1',
      { headers: { authorization: `Bearer ${API_KEY}` } },
    ],
    [
      'REST: send',
      '/api/v1/messages',
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${API_KEY}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ recipients: ['+61412345678'], message: 'Hello' }),
      },
    ],
    [
      'OAuth: token',
      '/oauth/token',
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&client_id=some-client&code=abc&code_verifier=def',
      },
    ],
    [
      'MCP: tools/list',
      '/mcp',
      {
        method: 'POST',
        headers: {
          authorization: 'Bearer mcp_at_needs_a_lookup',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      },
    ],
  ];

  for (const [name, path, init] of requests) {
    it(`${name} is answered 503 with Retry-After, at once`, async () => {
      // Twice: the first meets the refused connection, the second the pool that knows it.
      for (let attempt = 0; attempt < 2; attempt++) {
        const { response, body, ms } = await timed(path, init);
        expect({ status: response.status, body }).toEqual({ status: 503, body: UNAVAILABLE });
        expect(response.headers.get('retry-after')).toBe(String(OUTAGE_RETRY_AFTER_S));
        expect(ms).toBeLessThan(1_000);
      }
    });
  }

  it('/health names Postgres as down', async () => {
    const { response, body, ms } = await timed('/health');
    expect(response.status).toBe(503);
    expect(body).toMatchObject({
      status: 'unavailable',
      checks: { postgres: 'down', temporal: 'up' },
    });
    expect(ms).toBeLessThan(3_000);
  });

  it('answers a request still running at the deadline with 503, and nothing after it', async () => {
    // Raw HTTP, so that anything written on the connection after the answer would be seen.
    const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    const started = Date.now();
    const body = JSON.stringify({ work: 'slow' });
    socket.write(
      `POST ${SLOW_ROUTE} HTTP/1.1\r\nHost: herald.test\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    await new Promise<void>((resolve) => {
      socket.on('data', () => {
        if (received.includes('\r\n\r\n') && received.includes('}')) resolve();
      });
    });
    const answeredMs = Date.now() - started;
    // The handler finishes after the deadline; its result must not reach the connection.
    await new Promise((resolve) => setTimeout(resolve, SLOW_ROUTE_MS - answeredMs + 500));
    socket.destroy();

    expect(answeredMs).toBeGreaterThanOrEqual(REQUEST_DEADLINE_MS - 50);
    expect(answeredMs).toBeLessThan(5_000);
    expect(lateResults).toBe(1);
    expect(received.match(/HTTP\/1\.1 /g)).toEqual(['HTTP/1.1 ']);
    expect(received).toMatch(/^HTTP\/1\.1 503 /);
    expect(received.toLowerCase()).toContain(`retry-after: ${OUTAGE_RETRY_AFTER_S}\r\n`);
    expect(received.toLowerCase()).toContain('x-request-id: ');
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toEqual(UNAVAILABLE);
  });
});
