import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { otpWorkflowId } from '../../api/services/send-otp.js';
import { addCredits } from '../../db/credits.js';
import { searchAttributes } from '../../workflows/definitions.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 10);
});

afterAll(async () => {
  await stack.close();
});

/** The shortest lifetime is a minute: this test waits for it, on the real server's timer. */
it('expires an unverified code on its durable timer', { timeout: 120_000 }, async () => {
  const recipient = `+61437${String(Math.floor(Math.random() * 900_000) + 100_000)}`;
  const sent = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/otp/send',
    headers: { authorization: `Bearer ${tenant.token}` },
    payload: { recipient, purpose: 'login', expires_in_minutes: 1 },
  });
  const { request_id, expires_at } = sent.json().data;
  const inbox = await fetch(
    `${inject('simulatorUrl')}/v1/inbox?to=${encodeURIComponent(recipient)}`,
  );
  const [message] = ((await inbox.json()) as { messages: { body: string }[] }).messages;
  const code = /\d{6}/.exec(message?.body ?? '')?.[0];

  const handle = stack.temporal.workflow.getHandle(
    otpWorkflowId(tenant.workspaceId, null, request_id),
  );
  expect(await handle.result()).toBe('expired');
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expires_at));
  const description = await handle.describe();
  expect(description.typedSearchAttributes.get(searchAttributes.status)).toBe('expired');

  const late = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/otp/verify',
    headers: { authorization: `Bearer ${tenant.token}` },
    payload: { recipient, code, request_id },
  });
  expect(late.statusCode).toBe(422);
  expect(late.json()).toEqual({ message: 'The code is invalid or has expired.' });
});
