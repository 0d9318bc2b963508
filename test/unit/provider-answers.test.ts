/**
 * Which provider answers prove nothing was accepted: `Retry-After` as providers/http-answers.ts
 * reads it, and the simulator adapter against the real simulator (its documented `fail`,
 * `reject` and `timeout` behaviours) and against a stub answering what only a crash or a proxy
 * would (500, 502, 504, a bare 503, 429 with Retry-After).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, retryAfterMs } from '../../providers/http-answers.js';
import { SimulatorProvider } from '../../providers/simulator/client.js';
import { createSimulator } from '../../providers/simulator/server.js';

const message = (to: string, reference = `ref-${to}`) => ({
  to,
  from: null,
  body: 'Hello',
  reference,
  callbackUrl: null,
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-03-01T10:00:00Z');

  it('reads delay-seconds and HTTP dates, capped at 60 s; a past date is 0', () => {
    expect(retryAfterMs('2', now)).toBe(2_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('3600', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 09:59:00 GMT', now)).toBe(0);
  });

  it('is undefined when absent or in neither form', () => {
    for (const value of [null, '', 'soon', '-1', '1.5', '2026-03-01T10:00:30'])
      expect(retryAfterMs(value, now)).toBeUndefined();
  });
});

describe('SimulatorProvider against the simulator', () => {
  const app = createSimulator();
  const simulator = { url: '' };
  let provider: SimulatorProvider;
  const behave = (rule: Record<string, unknown>) =>
    fetch(new URL('/v1/behaviour', simulator.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rule),
    });
  const inbox = async (to: string) => {
    const url = new URL('/v1/inbox', simulator.url);
    url.searchParams.set('to', to);
    return ((await (await fetch(url)).json()) as { messages: unknown[] }).messages;
  };

  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    simulator.url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    provider = new SimulatorProvider('sim', simulator.url, { timeoutMs: 200 });
    await behave({ prefix: '+614001', outcome: 'fail' });
    await behave({ prefix: '+614002', outcome: 'reject' });
    // Held back past the adapter's timeout, yet answered before the simulator closes.
    await behave({ prefix: '+614003', outcome: 'timeout', timeout_ms: 400 });
  });
  afterAll(async () => {
    // The adapter's keep-alive sockets would hold close() until the client lets them go.
    app.server.closeAllConnections();
    await app.close();
  });

  it('maps `fail` (503 unavailable, nothing stored) to failed', async () => {
    expect(await provider.submit(message('+61400100001'))).toEqual({
      kind: 'failed',
      reason: 'Temporarily unavailable, retry later.',
    });
    expect(await inbox('+61400100001')).toEqual([]);
  });

  it('maps `reject` (400) to rejected', async () => {
    expect(await provider.submit(message('+61400200001'))).toEqual({
      kind: 'rejected',
      reason: 'Destination +61400200001 rejected.',
    });
  });

  it('maps `timeout` to unknown, and the lookup then finds the stored message', async () => {
    const outcome = await provider.submit(message('+61400300001', 'slow-1'));
    expect(outcome).toMatchObject({ kind: 'unknown' });
    const [stored] = (await inbox('+61400300001')) as { id: string }[];
    expect(await provider.lookup('slow-1')).toEqual({ found: true, providerMessageId: stored?.id });
  });
});

describe('SimulatorProvider against answers only a crash or a proxy gives', () => {
  let server: http.Server;
  let provider: SimulatorProvider;
  const requests: string[] = [];
  /** To-number → [status, body, headers]. */
  const answers: Record<string, [number, string, Record<string, string>?]> = {
    '+61400000500': [500, '{"error":{"code":"internal","message":"Simulator error."}}'],
    '+61400000502': [502, '<html>Bad Gateway</html>'],
    '+61400000503': [503, '<html>Service Unavailable</html>', { 'retry-after': '5' }],
    '+61400000504': [504, '<html>Gateway Timeout</html>'],
    '+61400000429': [
      429,
      '{"error":{"code":"throttled","message":"Slow down."}}',
      { 'retry-after': '2' },
    ],
    '+61400000408': [408, ''],
    '+61400000200': [200, '{"id":"sim_x","status":"accepted"}'],
  };
  /** Reference → the answer to a lookup of it. */
  const lookups: Record<string, [number, string]> = {
    'proxy-page': [200, '<html>Welcome</html>'],
    'none-yet': [200, '{"messages":[]}'],
  };

  beforeAll(async () => {
    server = http.createServer(async (request, response) => {
      const reference = new URL(request.url ?? '/', 'http://stub').searchParams.get('reference');
      if (request.method === 'GET' && reference !== null) {
        const [status, body] = lookups[reference] ?? [404, ''];
        response.writeHead(status).end(body);
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const { to } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to: string };
      requests.push(to);
      const [status, body, headers] = answers[to] ?? [404, ''];
      response.writeHead(status, {
        'content-type': body.startsWith('{') ? 'application/json' : 'text/html',
        ...headers,
      });
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    provider = new SimulatorProvider('sim', `http://127.0.0.1:${port}`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('maps 500, 502, a 503 that is not its own `unavailable`, 504 and a 200 to unknown', async () => {
    const outcomes = [];
    for (const to of ['+61400000500', '+61400000502', '+61400000503', '+61400000504'])
      outcomes.push(await provider.submit(message(to)));
    outcomes.push(await provider.submit(message('+61400000200')));
    expect(outcomes).toEqual([
      { kind: 'unknown', reason: 'Simulator error.' },
      { kind: 'unknown', reason: 'HTTP 502' },
      { kind: 'unknown', reason: 'HTTP 503' },
      { kind: 'unknown', reason: 'HTTP 504' },
      { kind: 'unknown', reason: 'HTTP 200' },
    ]);
  });

  it('maps 429 to failed with its Retry-After, and 408 to failed', async () => {
    expect(await provider.submit(message('+61400000429'))).toEqual({
      kind: 'failed',
      reason: 'Slow down.',
      retryAfterMs: 2_000,
    });
    expect(await provider.submit(message('+61400000408'))).toEqual({
      kind: 'failed',
      reason: 'HTTP 408',
    });
  });

  it('refuses a lookup answered with a page instead of a message list', async () => {
    await expect(provider.lookup('proxy-page')).rejects.toThrow(
      'lookup failed: HTTP 200 without a message list',
    );
    expect(await provider.lookup('none-yet')).toEqual({ found: false });
  });

  it('sent each submission once: the adapter itself never resends', () => {
    expect(requests.toSorted()).toEqual(Object.keys(answers).toSorted());
  });
});

describe('SimulatorProvider where nothing listens', () => {
  it('maps a refused connection to failed: nothing left Herald', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const provider = new SimulatorProvider('sim', `http://127.0.0.1:${port}`, { timeoutMs: 500 });
    expect(await provider.submit(message('+61400000001'))).toEqual({
      kind: 'failed',
      reason: 'connection refused',
    });
  });
});

describe('SimulatorProvider against an answer twice the size it accepts', () => {
  it('cuts it off and counts the submission unknown, never holding it all', async () => {
    const huge = http.createServer((_request, response) => {
      response.writeHead(202, { 'content-type': 'application/json' });
      response.end(`{"id":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    });
    await new Promise<void>((resolve) => huge.listen(0, '127.0.0.1', resolve));
    const { port } = huge.address() as AddressInfo;
    try {
      const provider = new SimulatorProvider('sim', `http://127.0.0.1:${port}`, {
        timeoutMs: 5_000,
      });
      expect(await provider.submit(message('+61400000002'))).toEqual({
        kind: 'unknown',
        reason: 'answer larger than 1048576 bytes',
      });
    } finally {
      huge.closeAllConnections();
      await new Promise<void>((resolve) => huge.close(() => resolve()));
    }
  });
});
