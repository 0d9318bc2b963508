/**
 * The provider webhooks under hostile input: references and slugs that cannot name anything are
 * 4xx, never a 500; receipts of simulator-protocol providers (the `own` provider included) count
 * only when signed with the credential Herald submitted the message with.
 */
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { insertCampaign } from '../../db/campaigns.js';
import { findProvider } from '../../db/providers.js';
import { adapterFor } from '../../providers/registry.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { buildApp } from '../../server/app.js';
import { receiptSignature } from '../support/receipts.js';
import { markInterrupted, messageRows, numbers, simulatorProvider } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const NO_REFERENCE = { message: 'The receipt names no Herald message reference.' };
const FORBIDDEN = { message: 'Invalid signature.' };
const AT = '2030-01-01T00:00:01.000Z';

let stack: Stack;
let tenant: Tenant;
let other: Tenant;
const simulators: RunningSimulator[] = [];

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  other = await createTenant(stack.admin);
});

afterAll(async () => {
  for (const simulator of simulators) await simulator.close();
  await stack?.close();
});

/** A saved, never dispatched campaign of one message, left as if submitted to `provider`. */
async function submittedMessage(workspaceId: number, provider: string): Promise<string> {
  const { id } = await insertCampaign(stack.sql, {
    workspaceId,
    apiKeyId: null,
    reference: null,
    purpose: 'transactional',
    body: 'Receipts',
    senderId: null,
    routingType: 'direct',
    providerSlug: provider,
    failoverRouteSlug: null,
    recipients: numbers(1),
  });
  await markInterrupted(stack, id, [1], provider);
  return `cmp-${id}-1`;
}

function postReceipt(url: string, payload: unknown, headers: Record<string, string> = {}) {
  return stack.app.inject({ method: 'POST', url, payload: payload as object, headers });
}

const receipt = (reference: string | null, fields: Record<string, unknown> = {}) => ({
  id: 'sim_0123',
  reference,
  status: 'delivered',
  error_code: null,
  at: AT,
  ...fields,
});

// A NUL character anywhere is refused before these routes run: test/integration/hostile-input.test.ts.
describe('receipt references and slugs', () => {
  it.each([
    ['a 20-digit campaign id', 'cmp-12345678901234567890-1'],
    ['a campaign id past 2^53', 'cmp-9007199254740993-1'],
    ['a sequence past 2^31 - 1', 'cmp-1-2147483648'],
    ['a zero campaign id', 'cmp-0-1'],
    ['an OTP id of 36 dashes', `otp-${'-'.repeat(36)}`],
    ['an OTP id that is not a UUID', 'otp-0000000g-0000-0000-0000-000000000000'],
    ['no Herald reference at all', 'order-7'],
  ])('answers 400 to a reference with %s, in the body or in ?ref', async (_case, reference) => {
    const inBody = await postReceipt('/webhooks/providers/own', receipt(reference));
    expect(inBody.statusCode).toBe(400);
    expect(inBody.json()).toEqual(NO_REFERENCE);
    const inQuery = await postReceipt(
      `/webhooks/providers/tw?ref=${encodeURIComponent(reference)}`,
      receipt(null),
    );
    expect(inQuery.statusCode).toBe(400);
    expect(inQuery.json()).toEqual(NO_REFERENCE);
  });

  it('answers 400 to a receipt that names no reference', async () => {
    const response = await postReceipt('/webhooks/providers/own', receipt(null));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(NO_REFERENCE);
  });

  it('acknowledges a well-formed reference to a message Herald does not have (204)', async () => {
    const unknownCampaign = await postReceipt(
      '/webhooks/providers/own',
      receipt('cmp-9007199254740991-1'),
    );
    expect(unknownCampaign.statusCode).toBe(204);
    const unknownOtp = await postReceipt(
      '/webhooks/providers/own',
      receipt('otp-00000000-0000-4000-8000-000000000000'),
    );
    expect(unknownOtp.statusCode).toBe(204);
  });

  it.each([
    ['64 characters', 'p'.repeat(64)],
    ['a dot', 'a.b'],
  ])('answers 404 to a provider slug with %s', async (_case, slug) => {
    const reference = await submittedMessage(tenant.workspaceId, 'own');
    const response = await postReceipt(`/webhooks/providers/${slug}`, receipt(reference));
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ message: 'No such provider.' });
    const inbound = await stack.app.inject({
      method: 'POST',
      url: `/webhooks/inbound/${slug}/tw`,
      payload: { From: '+61400000001', To: '+61400000002', Body: 'STOP' },
    });
    expect(inbound.statusCode).toBe(404);
    expect(inbound.json()).toEqual({ message: 'No such workspace provider takes replies.' });
    const inboundProvider = await stack.app.inject({
      method: 'POST',
      url: `/webhooks/inbound/${tenant.slug}/${slug}`,
      payload: { From: '+61400000001', To: '+61400000002', Body: 'STOP' },
    });
    expect(inboundProvider.statusCode).toBe(404);
    expect(inboundProvider.json()).toEqual({
      message: 'No such workspace provider takes replies.',
    });
  });
});

describe('signed receipts (simulator protocol)', () => {
  it.each([
    ['the own provider', 'own'],
    ['a workspace simulator provider', 'signed'],
  ])('counts a receipt for %s only with the right signature', async (_case, slug) => {
    if (slug !== 'own') simulators.push(await simulatorProvider(stack, tenant.workspaceId, slug));
    const reference = await submittedMessage(tenant.workspaceId, slug);
    const campaignId = Number(reference.split('-')[1]);
    const url = `/webhooks/providers/${slug}`;
    const body = receipt(reference, { status: 'undelivered', error_code: 'EC_ABSENT' });
    const signed = receiptSignature(tenant.workspaceId, slug, body as never);

    const refusals = [
      await postReceipt(url, body),
      await postReceipt(url, body, { 'x-simulator-signature': '' }),
      await postReceipt(url, body, { 'x-simulator-signature': 'v1=AAAA' }),
      // Signed for the same slug in another workspace.
      await postReceipt(url, body, receiptSignature(other.workspaceId, slug, body as never)),
      // Right signature, another status.
      await postReceipt(url, { ...body, status: 'delivered', error_code: null }, signed),
    ];
    expect(refusals.map((response) => [response.statusCode, response.body])).toEqual(
      refusals.map(() => [403, JSON.stringify(FORBIDDEN)]),
    );
    expect((await messageRows(stack, campaignId))[0]?.deliveryStatus).toBeNull();

    const accepted = await postReceipt(url, body, signed);
    expect(accepted.statusCode).toBe(204);
    const [row] = await messageRows(stack, campaignId);
    expect([row?.deliveryStatus, row?.deliveryErrorCode, row?.deliveredAt]).toEqual([
      'undelivered',
      'EC_ABSENT',
      new Date(AT),
    ]);
  });

  it('accepts the receipt a simulator signs for a provider that existed before signing did', async () => {
    // A provider row as every earlier release stored it: nothing new was added to it.
    const simulator = await simulatorProvider(stack, tenant.workspaceId, 'older', {
      behaviour: { receipt: { outcome: 'undelivered', error_code: 'EC_SIGNED', delay_ms: 0 } },
    });
    simulators.push(simulator);
    const record = await findProvider(stack.sql, tenant.workspaceId, 'older');
    expect(record?.credentials).toBeNull();

    // An api that listens, recording what each receipt was answered.
    const answers: { status: number; signature: unknown }[] = [];
    const receiver: FastifyInstance = buildApp(
      {
        env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
        publicUrl: PUBLIC_URL,
        secret: inject('secret'),
        sql: stack.sql,
        temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
      },
      { logger: false },
    );
    receiver.addHook('onResponse', async (request, reply) => {
      answers.push({
        status: reply.statusCode,
        signature: request.headers['x-simulator-signature'],
      });
    });
    const listening = await receiver.listen({ port: 0, host: '127.0.0.1' });
    try {
      const reference = await submittedMessage(tenant.workspaceId, 'older');
      const campaignId = Number(reference.split('-')[1]);
      const adapter = adapterFor(record as NonNullable<typeof record>, inject('secret'));
      const outcome = await adapter.submit({
        to: numbers(1)[0] as string,
        from: null,
        body: 'Signed receipts',
        reference,
        callbackUrl: `${listening}/webhooks/providers/older`,
      });
      expect(outcome.kind).toBe('accepted');
      await expect
        .poll(async () => (await messageRows(stack, campaignId))[0]?.deliveryErrorCode, {
          timeout: 5_000,
          interval: 50,
        })
        .toBe('EC_SIGNED');
      expect(answers).toEqual([{ status: 204, signature: expect.stringMatching(/^v1=/) }]);
    } finally {
      await receiver.close();
    }
  });
});
