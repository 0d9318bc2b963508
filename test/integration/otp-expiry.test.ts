import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits } from '../../db/credits.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { otpWorkflowId, searchAttributes } from '../../workflows/definitions.js';
import { simulatorProvider } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
let rejecting: RunningSimulator;
let seed = Math.floor(Math.random() * 800_000) + 100_000;
const mobile = () => `+61437${seed++}`;

function post(url: string, payload: object) {
  return stack.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${tenant.token}` },
    payload,
  });
}

/** Sends a one-minute code (the shortest lifetime) and returns its request and code. */
async function sendShortLived(purpose: string, recipient = mobile(), provider?: string) {
  const sent = await post('/api/v1/otp/send', {
    recipient,
    purpose,
    expires_in_minutes: 1,
    ...(provider ? { provider_slug: provider } : {}),
  });
  const { request_id: requestId, expires_at: expiresAt } = sent.json().data;
  const inbox = await fetch(
    `${inject('simulatorUrl')}/v1/inbox?to=${encodeURIComponent(recipient)}`,
  );
  const [latest] = ((await inbox.json()) as { messages: { body: string }[] }).messages;
  const code = /\d{6}/.exec(latest?.body ?? '')?.[0] ?? '';
  return { recipient, requestId: requestId as string, expiresAt: expiresAt as string, code };
}

/** How the request's run ended, and the status an operator sees on it in the Temporal UI. */
async function ending(requestId: string) {
  const handle = stack.temporal.workflow.getHandle(
    otpWorkflowId(tenant.workspaceId, null, requestId),
  );
  const result = await handle.result();
  const status = (await handle.describe()).typedSearchAttributes.get(searchAttributes.status);
  return { result, status };
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 10);
  rejecting = await simulatorProvider(stack, tenant.workspaceId, 'refuser', {
    behaviour: { outcome: 'reject' },
  });
});

afterAll(async () => {
  await rejecting?.close();
  await stack?.close();
});

/** Runs end when their code's life is over: these wait a minute on the real server's timers. */
describe('OTP workflow endings', { timeout: 150_000 }, () => {
  it('ends as expired, verified, superseded or failed, visible in the Temporal UI', async () => {
    const unused = await sendShortLived('login');
    const verified = await sendShortLived('login');
    const replaced = await sendShortLived('reset');
    const replacement = await sendShortLived('reset', replaced.recipient);
    const refused = await sendShortLived('login', mobile(), 'refuser');

    const accepted = await post('/api/v1/otp/verify', {
      recipient: verified.recipient,
      code: verified.code,
      request_id: verified.requestId,
    });
    expect(accepted.statusCode).toBe(200);

    expect(await ending(refused.requestId)).toEqual({ result: 'failed', status: 'failed' });
    expect(await ending(unused.requestId)).toEqual({ result: 'expired', status: 'expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(unused.expiresAt));
    expect(await ending(verified.requestId)).toEqual({ result: 'verified', status: 'verified' });
    expect(await ending(replaced.requestId)).toEqual({
      result: 'superseded',
      status: 'superseded',
    });
    expect(await ending(replacement.requestId)).toEqual({ result: 'expired', status: 'expired' });

    const late = await post('/api/v1/otp/verify', {
      recipient: unused.recipient,
      code: unused.code,
      request_id: unused.requestId,
    });
    expect(late.statusCode).toBe(422);
    expect(late.json()).toEqual({ message: 'The code is invalid or has expired.' });
  });
});
