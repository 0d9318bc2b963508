import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits, creditBalance } from '../../db/credits.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FAILED = { message: 'The code is invalid or has expired.' };

let stack: Stack;
let tenant: Tenant;
let numberSeed = Math.floor(Math.random() * 9_000_000);
/** A fresh Australian mobile per test, under +6143 so no other file reads its inbox. */
const mobile = () => `+6143${String(1_000_000 + numberSeed++).slice(-7)}`;

function post(url: string, payload: object, headers: Record<string, string> = {}) {
  return stack.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${tenant.token}`, ...headers },
    payload,
  });
}
const send = (payload: object, headers?: Record<string, string>) =>
  post('/api/v1/otp/send', payload, headers);
const verify = (payload: object) => post('/api/v1/otp/verify', payload);

/** The codes the simulator's "phone" received, newest first. */
async function codesSentTo(to: string): Promise<string[]> {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  const { messages } = (await response.json()) as { messages: { body: string }[] };
  return messages.map((message) => /(\d{6,8})/.exec(message.body)?.[1] ?? message.body);
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
});

afterAll(async () => {
  await stack.close();
});

describe('POST /api/v1/otp/send', () => {
  it('submits a six-digit code and answers accepted with the request', async () => {
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login' });
    expect(response.statusCode).toBe(202);
    const body = response.json();
    expect(body).toEqual({
      message: 'Verification code sent.',
      data: {
        request_id: expect.stringMatching(UUID),
        status: 'accepted',
        expires_at: expect.any(String),
        provider: 'own',
        sender_id: null,
        billing: { source: 'credits', settlement_status: 'settled', credits_charged: 1 },
      },
    });
    const lifetime = Date.parse(body.data.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(4 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(5 * 60_000);
    const [code] = await codesSentTo(recipient);
    expect(code).toMatch(/^\d{6}$/);
    expect((await verify({ recipient, code, request_id: body.data.request_id })).json()).toEqual({
      message: 'The code is verified.',
    });
  });
});

describe('POST /api/v1/otp/verify', () => {
  it('accepts a code once only', async () => {
    const recipient = mobile();
    const { request_id } = (await send({ recipient, purpose: 'login' })).json().data;
    const [code] = await codesSentTo(recipient);
    expect((await verify({ recipient, code, request_id })).statusCode).toBe(200);
    const again = await verify({ recipient, code, request_id });
    expect(again.statusCode).toBe(422);
    expect(again.json()).toEqual(FAILED);
  });

  it('keeps the ledger and the balance in agreement', async () => {
    const { balance, ledgerSum } = await creditBalance(stack.sql, tenant.workspaceId);
    expect(balance).toBe(ledgerSum);
  });
});
