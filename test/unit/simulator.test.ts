import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSimulator, startSimulator } from '../../providers/simulator/server.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SIM_ID = /^sim_[0-9a-f]{32}$/;

let app: FastifyInstance;

beforeEach(() => {
  app = createSimulator({ receipts: { backoff_ms: 10 } });
});

afterEach(async () => {
  await app.close();
});

function submit(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/v1/messages',
    headers,
    payload: { from: 'Herald', body: 'Your code is 123456', reference: 'ref-1', ...body },
  });
}

function behave(payload: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/v1/behaviour', payload });
}

async function inbox(to?: string) {
  const url = to ? `/v1/inbox?to=${encodeURIComponent(to)}` : '/v1/inbox';
  return (await app.inject({ method: 'GET', url })).json().messages;
}

/** A real HTTP server that records receipt POSTs; `statuses` answers the first requests. */
async function receiver(statuses: number[] = []) {
  const received: unknown[] = [];
  const signatures: (string | string[] | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    signatures.push(req.headers['x-simulator-signature']);
    let data = '';
    req.on('data', (chunk) => {
      data += chunk;
    });
    req.on('end', () => {
      received.push(JSON.parse(data));
      res.statusCode = statuses.shift() ?? 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/receipts`,
    received,
    signatures,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('provider simulator: submissions', () => {
  it('accepts, stores and lists the inbox newest first, filtered by `to`', async () => {
    const first = await submit({ to: '+61400000001', reference: 'a' });
    const second = await submit({ to: '+61400000002', reference: 'b', from: null });
    const third = await submit({ to: '+61400000001', reference: 'c' });

    expect(first.statusCode).toBe(202);
    expect(first.json()).toEqual({ id: expect.stringMatching(SIM_ID), status: 'accepted' });
    const ids = [first, second, third].map((r) => r.json().id);
    expect(new Set(ids).size).toBe(3);

    expect(await inbox('+61400000001')).toEqual([
      {
        id: ids[2],
        to: '+61400000001',
        from: 'Herald',
        body: 'Your code is 123456',
        reference: 'c',
        received_at: expect.stringMatching(ISO),
      },
      {
        id: ids[0],
        to: '+61400000001',
        from: 'Herald',
        body: 'Your code is 123456',
        reference: 'a',
        received_at: expect.stringMatching(ISO),
      },
    ]);
    const all = await inbox();
    expect(all.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(all[1].from).toBeNull();
  });

  it('reads an unencoded "+" in the inbox query as a plus sign', async () => {
    await submit({ to: '+61400000001' });
    const res = await app.inject({ method: 'GET', url: '/v1/inbox?to=+61400000001' });
    expect(res.json().messages).toHaveLength(1);
  });

  it('rejects permanently with 400 and stores nothing', async () => {
    await behave({ outcome: 'reject' });
    const res = await submit({ to: '+61400000001' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { code: 'rejected', message: expect.any(String) },
    });
    expect(await inbox()).toEqual([]);
  });

  it('fails retryably with 503 and stores nothing', async () => {
    await behave({ outcome: 'fail' });
    const res = await submit({ to: '+61400000001' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      error: { code: 'unavailable', message: expect.any(String) },
    });
    expect(await inbox()).toEqual([]);
  });

  it('on timeout stores the message at once but withholds the 202', async () => {
    await behave({ outcome: 'timeout', timeout_ms: 200 });
    const started = Date.now();
    const pending = submit({ to: '+61400000001', reference: 'slow' });

    await vi.waitFor(async () => expect(await inbox()).toHaveLength(1), { timeout: 150 });
    expect(Date.now() - started).toBeLessThan(200);

    const res = await pending;
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ id: (await inbox())[0].id, status: 'accepted' });
  });

  it('delays every answer by latency_ms', async () => {
    await behave({ latency_ms: 100 });
    const started = Date.now();
    const res = await submit({ to: '+61400000001' });
    expect(res.statusCode).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('applies the longest matching prefix rule, falling back to the global rule', async () => {
    await behave({ outcome: 'reject' });
    await behave({ prefix: '+614', outcome: 'accept' });
    await behave({ prefix: '+6141', outcome: 'fail' });

    expect((await submit({ to: '+61400000001' })).statusCode).toBe(202);
    expect((await submit({ to: '+61410000001' })).statusCode).toBe(503);
    expect((await submit({ to: '+61300000001' })).statusCode).toBe(400);
    expect((await submit({ to: '+14155550100' })).statusCode).toBe(400);
  });

  it('failure_rate 1 fails every otherwise-accepted submission', async () => {
    const rule = await behave({ failure_rate: 1 });
    expect(rule.json().failure_rate).toBe(1);
    for (let i = 0; i < 20; i++) {
      const res = await submit({ to: '+61400000001', reference: `r${i}` });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
    }
    expect(await inbox()).toEqual([]);
  });

  it('answers 422 invalid_request on a bad body', async () => {
    const bad = [
      { to: '0400000001' },
      { to: '+61400000001', body: '' },
      { to: '+61400000001', reference: 42 },
      { to: '+61400000001', callback_url: 'not a url' },
      { to: '+61400000001', from: 7 },
    ];
    for (const body of bad) {
      const res = await submit(body);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({
        error: { code: 'invalid_request', message: expect.any(String) },
      });
    }
    expect((await submit({ to: '0400' })).json().error.message).toMatch(/^to: /);

    const malformed = await app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { 'content-type': 'application/json' },
      payload: '{"to":',
    });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().error.code).toBe('invalid_request');
    expect(await inbox()).toEqual([]);
  });
});

describe('provider simulator: receipts and lookup', () => {
  it('POSTs a delivered receipt with the documented body', async () => {
    const hook = await receiver();
    try {
      await behave({ receipt: { delay_ms: 10 } });
      const res = await submit({ to: '+61400000001', reference: 'r-1', callback_url: hook.url });
      expect(res.statusCode).toBe(202);

      await vi.waitFor(() => expect(hook.received).toHaveLength(1), { timeout: 2000 });
      expect(hook.received[0]).toEqual({
        id: res.json().id,
        reference: 'r-1',
        status: 'delivered',
        error_code: null,
        at: expect.stringMatching(ISO),
      });
    } finally {
      await hook.close();
    }
  });

  it('POSTs an undelivered receipt with the rule error_code', async () => {
    const hook = await receiver();
    try {
      await behave({ receipt: { outcome: 'undelivered', delay_ms: 0, error_code: 'EC_ABSENT' } });
      const res = await submit({ to: '+61400000001', reference: 'r-2', callback_url: hook.url });

      await vi.waitFor(() => expect(hook.received).toHaveLength(1), { timeout: 2000 });
      expect(hook.received[0]).toEqual({
        id: res.json().id,
        reference: 'r-2',
        status: 'undelivered',
        error_code: 'EC_ABSENT',
        at: expect.stringMatching(ISO),
      });
      // The status lookup says the same, at the receipt's own time.
      const lookup = await app.inject({ method: 'GET', url: '/v1/messages?reference=r-2' });
      expect(lookup.json().messages[0]).toMatchObject({
        status: 'undelivered',
        error_code: 'EC_ABSENT',
        status_at: (hook.received[0] as { at: string }).at,
      });
    } finally {
      await hook.close();
    }
  });

  it('signs each receipt with the credential its message was submitted with', async () => {
    const hook = await receiver([500]);
    /** HMAC-SHA256 of [id, reference, status, error_code, at] as JSON (README.md), computed here. */
    const expected = (credential: string, receipt: Record<string, unknown>) =>
      `v1=${createHmac('sha256', credential)
        .update(
          JSON.stringify([
            receipt.id,
            receipt.reference,
            receipt.status,
            receipt.error_code,
            receipt.at,
          ]),
        )
        .digest('base64url')}`;
    try {
      await behave({ receipt: { delay_ms: 0 } });
      await behave({
        prefix: '+614000000',
        receipt: { outcome: 'undelivered', error_code: 'EC_ABSENT' },
      });
      const a = await submit(
        { to: '+61400000001', reference: 'signed-a', callback_url: hook.url },
        { authorization: 'Bearer cred-A_1' },
      );
      expect(a.statusCode).toBe(202);
      await vi.waitFor(() => expect(hook.received).toHaveLength(2), { timeout: 2000 });
      const b = await submit(
        { to: '+61410000002', reference: 'signed-b', callback_url: hook.url },
        { authorization: 'bearer cred-B' },
      );
      expect(b.statusCode).toBe(202);
      await vi.waitFor(() => expect(hook.received).toHaveLength(3), { timeout: 2000 });

      const [first, retried, second] = hook.received as Record<string, unknown>[];
      expect(first).toMatchObject({ id: a.json().id, status: 'undelivered' });
      expect(retried).toEqual(first);
      expect(second).toMatchObject({ id: b.json().id, status: 'delivered' });
      expect(hook.signatures).toEqual([
        expected('cred-A_1', first as Record<string, unknown>),
        expected('cred-A_1', first as Record<string, unknown>),
        expected('cred-B', second as Record<string, unknown>),
      ]);
      expect(hook.signatures[0]).toMatch(/^v1=[A-Za-z0-9_-]{43}$/);
      expect(hook.signatures[2]).not.toBe(expected('cred-A_1', second as Record<string, unknown>));

      const views = await app.inject({ method: 'GET', url: '/v1/messages?reference=signed-a' });
      expect(JSON.stringify(views.json()) + JSON.stringify(await inbox())).not.toContain('cred-');
    } finally {
      await hook.close();
    }
  });

  it('sends the receipt unsigned when the submission carried no credential', async () => {
    const hook = await receiver();
    try {
      await behave({ receipt: { delay_ms: 0 } });
      await submit({ to: '+61400000001', callback_url: hook.url });
      await vi.waitFor(() => expect(hook.received).toHaveLength(1), { timeout: 2000 });
      expect(hook.signatures).toEqual([undefined]);
    } finally {
      await hook.close();
    }
  });

  it.each([
    ['a Basic scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['a bare Bearer', 'Bearer'],
    ['a credential with a space', 'Bearer two words'],
  ])('answers 401 to an Authorization with %s, storing nothing', async (_case, authorization) => {
    const res = await submit({ to: '+61400000001' }, { authorization });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      error: { code: 'unauthorized', message: 'Authorization must be "Bearer <credential>".' },
    });
    expect(await inbox()).toEqual([]);
  });

  it('retries a failed receipt POST with backoff', async () => {
    const hook = await receiver([500, 503]);
    try {
      await behave({ receipt: { delay_ms: 0 } });
      await submit({ to: '+61400000001', callback_url: hook.url });
      await vi.waitFor(() => expect(hook.received).toHaveLength(3), { timeout: 2000 });
      expect(hook.received[2]).toEqual(hook.received[0]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(hook.received).toHaveLength(3);
    } finally {
      await hook.close();
    }
  });

  it('sends nothing when the receipt outcome is none', async () => {
    const hook = await receiver();
    try {
      await behave({ receipt: { outcome: 'none', delay_ms: 0 } });
      await submit({ to: '+61400000001', reference: 'quiet', callback_url: hook.url });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(hook.received).toEqual([]);
      const res = await app.inject({ method: 'GET', url: '/v1/messages?reference=quiet' });
      expect(res.json().messages[0]).toMatchObject({
        status: 'accepted',
        error_code: null,
        status_at: null,
      });
    } finally {
      await hook.close();
    }
  });

  it('looks messages up by reference with their status', async () => {
    await behave({ receipt: { outcome: 'undelivered', delay_ms: 0 } });
    const sent = await submit({ to: '+61400000001', reference: 'lookup-1' });
    await submit({ to: '+61400000001', reference: 'other' });

    await vi.waitFor(
      async () => {
        const res = await app.inject({ method: 'GET', url: '/v1/messages?reference=lookup-1' });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({
          messages: [
            {
              id: sent.json().id,
              to: '+61400000001',
              from: 'Herald',
              body: 'Your code is 123456',
              reference: 'lookup-1',
              received_at: expect.stringMatching(ISO),
              status: 'undelivered',
              error_code: 'undeliverable',
              status_at: expect.stringMatching(ISO),
            },
          ],
        });
      },
      { timeout: 2000 },
    );

    const none = await app.inject({ method: 'GET', url: '/v1/messages?reference=missing' });
    expect(none.json()).toEqual({ messages: [] });
    const bad = await app.inject({ method: 'GET', url: '/v1/messages' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('invalid_request');
  });
});

describe('provider simulator: behaviour and reset', () => {
  const defaults = {
    prefix: '',
    latency_ms: 0,
    failure_rate: 0,
    outcome: 'accept',
    timeout_ms: 30000,
    receipt: { outcome: 'delivered', delay_ms: 50, error_code: null },
  };

  it('returns the resulting rule, lists rules and resets them with DELETE', async () => {
    const set = await behave({ prefix: '+614', outcome: 'reject', receipt: { delay_ms: 5 } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({
      ...defaults,
      prefix: '+614',
      outcome: 'reject',
      receipt: { ...defaults.receipt, delay_ms: 5 },
    });
    const merged = await behave({ prefix: '+614', latency_ms: 1 });
    expect(merged.json()).toMatchObject({ outcome: 'reject', latency_ms: 1 });

    const listed = await app.inject({ method: 'GET', url: '/v1/behaviour' });
    expect(listed.json().rules.map((r: { prefix: string }) => r.prefix)).toEqual(['', '+614']);

    const reset = await app.inject({ method: 'DELETE', url: '/v1/behaviour' });
    expect(reset.statusCode).toBe(200);
    expect(reset.json()).toEqual({ rules: [defaults] });
    expect((await submit({ to: '+61400000001' })).statusCode).toBe(202);
  });

  it('answers 422 on a bad behaviour body', async () => {
    for (const payload of [
      { failure_rate: 2 },
      { outcome: 'explode' },
      { prefix: '614' },
      { latency_ms: -1 },
      { latency: 10 },
      { receipt: { outcome: 'lost' } },
    ]) {
      const res = await behave(payload);
      expect(res.statusCode).toBe(422);
      expect(res.json().error.code).toBe('invalid_request');
    }
  });

  it('clears the inbox with DELETE', async () => {
    await submit({ to: '+61400000001' });
    const res = await app.inject({ method: 'DELETE', url: '/v1/inbox' });
    expect(res.statusCode).toBe(204);
    expect(await inbox()).toEqual([]);
  });

  it('drops the oldest message past the inbox capacity', async () => {
    const small = createSimulator({ capacity: 2 });
    try {
      for (const reference of ['a', 'b', 'c']) {
        await small.inject({
          method: 'POST',
          url: '/v1/messages',
          payload: { to: '+61400000001', from: null, body: 'x', reference },
        });
      }
      const res = await small.inject({ method: 'GET', url: '/v1/inbox' });
      expect(res.json().messages.map((m: { reference: string }) => m.reference)).toEqual([
        'c',
        'b',
      ]);
    } finally {
      await small.close();
    }
  });
});

describe('startSimulator', () => {
  it('listens on a real port and closes', async () => {
    const sim = await startSimulator({ port: 0 });
    try {
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${sim.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: '+61400000001', from: null, body: 'hi', reference: 'x' }),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ id: expect.stringMatching(SIM_ID), status: 'accepted' });
    } finally {
      await sim.close();
    }
  });
});
