/**
 * Customer webhooks on the real stack: events written by the triggers of 0007 in the state
 * change's transaction, dispatched by the shared worker's dispatcher, delivered by
 * webhookWorkflow to a local receiving server (the shared worker allows private URLs), signed per
 * Standard Webhooks and verified here with the official `standardwebhooks` package.
 *
 * Receipts are posted to this file's api by hand (its simulators send none), so the events they
 * cause are exactly those asserted.
 */
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { webhookAttempts, webhookCreate } from '../../cli/admin/webhooks.js';
import { addCredits } from '../../db/credits.js';
import { insertOtpRequest } from '../../db/otp-requests.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { generateWebhookSecret } from '../../security/webhook-signature.js';
import { otpWorkflowId, searchAttributes, TASK_QUEUE } from '../../workflows/definitions.js';
import type { otpWorkflow } from '../../workflows/otp.js';
import { receiptSignature } from '../support/receipts.js';
import {
  inbox,
  numbers,
  sendQueued,
  setBehaviour,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import {
  attemptsLog,
  type LoggedAttempt,
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EVENT_ID = /^msg_[0-9a-f]{32}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

let stack: Stack;
let receiver: WebhookReceiver;
const simulators: RunningSimulator[] = [];

interface Endpoint {
  id: number;
  url: string;
  events: string[];
  secret: string;
}

/** `webhook create` as an operator who allows private URLs (the receiver is on 127.0.0.1). */
async function createEndpoint(tenant: Tenant, path: string, events: string): Promise<Endpoint> {
  const context = { ...stack.admin, env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true } };
  const created = await webhookCreate(context, {
    workspace: tenant.slug,
    url: `${receiver.url}${path}`,
    events,
  });
  return created.json as unknown as Endpoint;
}

interface Payload {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The request's payload once the official Standard Webhooks library has verified it, after
 * checking the headers, and that a changed body or another secret does not verify.
 */
function verified(secret: string, request: ReceivedWebhook): Payload {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  expect(headers['webhook-id']).toMatch(EVENT_ID);
  expect(request.headers['content-type']).toBe('application/json');
  expect(Math.abs(Number(headers['webhook-timestamp']) - request.at / 1000)).toBeLessThan(5);
  expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  const payload = new Webhook(secret).verify(request.body, headers) as Payload;
  expect(payload).toEqual(JSON.parse(request.body));
  const tampered = request.body.replace('"data":{', '"data":{"extra":1,');
  expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(
    'No matching signature found',
  );
  expect(() => new Webhook(generateWebhookSecret()).verify(request.body, headers)).toThrow(
    'No matching signature found',
  );
  return payload;
}

/** The outbox row of a delivered event: its id (webhook-id) and timestamp. */
async function outboxRow(eventId: string) {
  const [row] = await stack.sql<{ type: string; createdAt: Date; workspaceId: number }[]>`
    select type, created_at, workspace_id from webhook_events where event_id = ${eventId}`;
  return row;
}

/** Posts a simulator-format delivery receipt to the api, as the provider would. */
async function postReceipt(
  workspaceId: number,
  provider: string,
  message: { id: string; reference: string },
  status: 'delivered' | 'undelivered',
  errorCode: string | null,
  at: string,
) {
  const receipt = {
    id: message.id,
    reference: message.reference,
    status,
    error_code: errorCode,
    at,
  };
  const response = await stack.app.inject({
    method: 'POST',
    url: `/webhooks/providers/${provider}`,
    headers: receiptSignature(workspaceId, provider, receipt),
    payload: receipt,
  });
  expect(response.statusCode).toBeLessThan(300);
}

beforeAll(async () => {
  stack = await openStack();
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  for (const simulator of simulators) await simulator.close();
  await stack?.close();
});

describe('webhook create', () => {
  it('shows the whsec_ secret once and stores it only encrypted', async () => {
    const tenant = await createTenant(stack.admin);
    const endpoint = await createEndpoint(tenant, '/created', 'all');
    expect(endpoint).toEqual({
      id: expect.any(Number),
      url: `${receiver.url}/created`,
      events: [...WEBHOOK_EVENT_TYPES],
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(endpoint.secret.slice(6), 'base64')).toHaveLength(32);
    const [row] = await stack.sql<{ secret: Buffer }[]>`
      select secret from webhook_endpoints where id = ${endpoint.id}`;
    expect(row?.secret.includes(Buffer.from(endpoint.secret))).toBe(false);
    expect(row?.secret.includes(Buffer.from(endpoint.secret.slice(6), 'base64'))).toBe(false);
  });
});

describe('campaign and message events', () => {
  it('announces each message sent or failed, the completion, then delivered and undelivered receipts', async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/campaign/${tenant.slug}`;
    const endpoint = await createEndpoint(tenant, path, 'all');
    const simulator = await simulatorProvider(stack, tenant.workspaceId, 'hooks', {
      behaviour: { receipt: { outcome: 'none' } },
    });
    simulators.push(simulator);
    const recipients = numbers(4);
    await setBehaviour(simulator.url, { prefix: recipients[1], outcome: 'reject' });
    const text = 'Your parcel PX-88412 is out for delivery';
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: text, provider_slug: 'hooks', reference: 'order-7' },
      { total: 4, reference: 'order-7' },
    );
    await waitForCompletion(stack, tenant.token, id);

    const rows = await stack.sql<
      { seq: number; providerMessageId: string | null; submittedAt: Date | null }[]
    >`select seq, provider_message_id, submitted_at from campaign_messages
      where campaign_id = ${id} order by seq`;
    const [campaign] = await stack.sql<{ createdAt: Date; completedAt: Date }[]>`
      select created_at, completed_at from campaigns where id = ${id}`;
    const message = (seq: number) => {
      const row = rows[seq - 1];
      return {
        campaign_id: id,
        message_seq: seq,
        reference: 'order-7',
        recipient: recipients[seq - 1],
        provider: 'hooks',
        provider_message_id: row?.providerMessageId,
        status: 'sent',
        stage: null,
        error: null,
        error_code: null,
        submitted_at: row?.submittedAt?.toISOString() ?? null,
        delivered_at: null,
      };
    };
    const sent = [1, 3, 4].map((seq) => ({ type: 'message.sent', data: message(seq) }));
    const failedToSend = {
      type: 'message.failed',
      data: {
        ...message(2),
        provider_message_id: null,
        status: 'failed',
        stage: 'submission',
        error: `hooks: Destination ${recipients[1]} rejected.`,
      },
    };
    const completed = {
      type: 'campaign.completed',
      data: {
        campaign_id: id,
        reference: 'order-7',
        name: null,
        status: 'completed',
        total_recipients: 4,
        sent_count: 3,
        failed_count: 1,
        created_at: campaign?.createdAt.toISOString(),
        completed_at: campaign?.completedAt.toISOString(),
      },
    };

    /** The requests' verified payloads, in a stable order, without their timestamps. */
    const received = async (count: number) => {
      const requests = await receiver.waitFor(path, count);
      const payloads = [];
      for (const request of requests) {
        const payload = verified(endpoint.secret, request);
        expect(request.body).not.toContain(text);
        expect(request.body).not.toContain('PX-88412');
        const row = await outboxRow(String(request.headers['webhook-id']));
        expect(row).toEqual({
          type: payload.type,
          createdAt: new Date(payload.timestamp),
          workspaceId: tenant.workspaceId,
        });
        expect(payload.timestamp).toMatch(ISO);
        payloads.push({ type: payload.type, data: payload.data });
      }
      const order = (payload: { type: string; data: Record<string, unknown> }) =>
        `${payload.type}/${payload.data.stage ?? ''}/${payload.data.message_seq ?? 0}`;
      return payloads.sort((a, b) => order(a).localeCompare(order(b)));
    };

    expect(await received(5)).toEqual([completed, failedToSend, ...sent]);

    const [first, , third] = await Promise.all(
      [recipients[0], recipients[1], recipients[2]].map(
        async (to) => (await inbox(simulator.url, to as string))[0],
      ),
    );
    const deliveredAt = new Date(Date.now() - 2000).toISOString();
    const undeliveredAt = new Date(Date.now() - 1000).toISOString();
    await postReceipt(
      tenant.workspaceId,
      'hooks',
      first as { id: string; reference: string },
      'delivered',
      null,
      deliveredAt,
    );
    await postReceipt(
      tenant.workspaceId,
      'hooks',
      third as { id: string; reference: string },
      'undelivered',
      'EC_ABSENT',
      undeliveredAt,
    );

    expect(await received(7)).toEqual([
      completed,
      {
        type: 'message.delivered',
        data: { ...message(1), status: 'delivered', delivered_at: deliveredAt },
      },
      {
        type: 'message.failed',
        data: {
          ...message(3),
          status: 'undelivered',
          stage: 'delivery',
          error_code: 'EC_ABSENT',
          delivered_at: undeliveredAt,
        },
      },
      failedToSend,
      ...sent,
    ]);
    // Each event once, each on its first attempt, every webhook-id distinct.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.at(path)).toHaveLength(7);
    expect(new Set(receiver.at(path).map((request) => request.headers['webhook-id'])).size).toBe(7);
    const log = (await webhookAttempts(stack.admin, { id: String(endpoint.id) })).json as {
      attempts: { attempt: number; status_code: number; succeeded: boolean; final: boolean }[];
    };
    expect(
      log.attempts.map(({ attempt, status_code, succeeded, final }) => ({
        attempt,
        status_code,
        succeeded,
        final,
      })),
    ).toEqual(Array(7).fill({ attempt: 1, status_code: 200, succeeded: true, final: true }));
  });

  it('records nothing for a workspace without endpoints, or for events it did not subscribe to', async () => {
    const quiet = await createTenant(stack.admin);
    const picky = await createTenant(stack.admin);
    const path = `/picky/${picky.slug}`;
    await createEndpoint(picky, path, 'campaign.completed');
    for (const tenant of [quiet, picky]) {
      const id = await sendQueued(
        stack,
        tenant.token,
        { recipients: numbers(2), message: 'Hello' },
        { total: 2 },
      );
      await waitForCompletion(stack, tenant.token, id);
    }
    const counts = await stack.sql<{ workspaceId: number; type: string; count: number }[]>`
      select workspace_id, type, count(*)::int as count from webhook_events
      where workspace_id in (${quiet.workspaceId}, ${picky.workspaceId})
      group by workspace_id, type`;
    expect(counts).toEqual([
      { workspaceId: picky.workspaceId, type: 'campaign.completed', count: 1 },
    ]);
    const [request] = await receiver.waitFor(path, 1);
    expect(JSON.parse(request?.body ?? '{}').type).toBe('campaign.completed');
  });
});

describe('OTP events', () => {
  let tenant: Tenant;
  let endpoint: Endpoint;
  const path = `/otp/${randomUUID()}`;

  beforeAll(async () => {
    tenant = await createTenant(stack.admin);
    await addCredits(stack.sql, tenant.workspaceId, 20);
    endpoint = await createEndpoint(tenant, path, 'otp.accepted,otp.verified,otp.expired');
  });

  const otpRow = async (requestId: string) => {
    const [row] = await stack.sql<
      { providerMessageId: string; createdAt: Date; expiresAt: Date; verifiedAt: Date | null }[]
    >`select provider_message_id, created_at, expires_at, verified_at from otp_requests
      where id = ${requestId}`;
    return row as NonNullable<typeof row>;
  };

  const eventsFor = (requestId: string) =>
    receiver
      .at(path)
      .map((request) => ({ request, payload: verified(endpoint.secret, request) }))
      .filter(({ payload }) => payload.data.request_id === requestId);

  it('announces a code accepted and then verified, never with the code', async () => {
    const [recipient] = numbers(1) as [string];
    const sent = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipient, purpose: 'login' },
    });
    expect(sent.statusCode).toBe(202);
    const requestId = sent.json().data.request_id as string;
    const [text] = await inbox(inject('simulatorUrl'), recipient);
    const code = /\d{6}/.exec(text?.body ?? '')?.[0] as string;
    const verify = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipient, code, request_id: requestId },
    });
    expect(verify.statusCode).toBe(200);

    await expect.poll(() => eventsFor(requestId).length, { timeout: 20_000 }).toBe(2);
    const row = await otpRow(requestId);
    const data = {
      request_id: requestId,
      purpose: 'login',
      recipient,
      provider: 'own',
      provider_message_id: row.providerMessageId,
      sender_id: null,
      created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt.toISOString(),
    };
    const events = eventsFor(requestId)
      .map(({ payload }) => ({ type: payload.type, data: payload.data }))
      .sort((a, b) => a.type.localeCompare(b.type));
    expect(events).toEqual([
      { type: 'otp.accepted', data: { ...data, status: 'accepted', verified_at: null } },
      {
        type: 'otp.verified',
        data: { ...data, status: 'verified', verified_at: row.verifiedAt?.toISOString() },
      },
    ]);
    for (const { request } of eventsFor(requestId)) {
      expect(request.body).not.toContain(code);
      expect(request.body).not.toContain('verification code');
      expect(Object.keys(JSON.parse(request.body).data)).not.toContain('code');
    }
  });

  it('announces a code that expired unused', async () => {
    // The api's shortest lifetime is a minute; the real workflow runs here with a 3 s one.
    const [recipient] = numbers(1) as [string];
    const requestId = randomUUID();
    const expiresAt = new Date(Date.now() + 3000);
    const key = await tenant.keyWith(['otp:send']);
    const workflowId = otpWorkflowId(tenant.workspaceId, null, requestId);
    await insertOtpRequest(stack.sql, {
      id: requestId,
      workspaceId: tenant.workspaceId,
      apiKeyId: key.id,
      userId: tenant.userId,
      recipient,
      purpose: 'expiry',
      serviceSlug: null,
      bodyTemplate: 'Your verification code is {code}.',
      segments: 1,
      codeLength: 6,
      senderId: null,
      providerSlug: 'own',
      expiresAt,
      billingSource: 'credits',
      workflowId,
    });
    const handle = await stack.temporal.workflow.start<typeof otpWorkflow>('otpWorkflow', {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [{ requestId, codeLength: 6, expiresAt: expiresAt.getTime() }],
      typedSearchAttributes: [
        { key: searchAttributes.workspaceId, value: String(tenant.workspaceId) },
        { key: searchAttributes.kind, value: 'otp' },
      ],
    });
    expect(await handle.result()).toBe('expired');

    await expect.poll(() => eventsFor(requestId).length, { timeout: 20_000 }).toBe(2);
    const row = await otpRow(requestId);
    const expired = eventsFor(requestId).find(({ payload }) => payload.type === 'otp.expired');
    expect(expired?.payload.data).toEqual({
      request_id: requestId,
      purpose: 'expiry',
      recipient,
      provider: 'own',
      provider_message_id: row.providerMessageId,
      sender_id: null,
      status: 'expired',
      created_at: row.createdAt.toISOString(),
      expires_at: expiresAt.toISOString(),
      verified_at: null,
    });
    expect(Date.parse(expired?.payload.timestamp ?? '')).toBeGreaterThanOrEqual(
      expiresAt.getTime(),
    );
  });
});

describe('delivery retries on the production schedule', () => {
  it('retries 5 s after a 500 and after a timeout (15 s), then succeeds; the log shows each attempt', {
    timeout: 90_000,
  }, async () => {
    const tenant = await createTenant(stack.admin);
    const flaky = `/flaky/${tenant.slug}`;
    const hanging = `/hanging/${tenant.slug}`;
    receiver.plan(flaky, [500]);
    receiver.plan(hanging, ['hang']);
    const flakyEndpoint = await createEndpoint(tenant, flaky, 'campaign.completed');
    const hangingEndpoint = await createEndpoint(tenant, hanging, 'campaign.completed');
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: numbers(1), message: 'Retry me' },
      { total: 1 },
    );
    await waitForCompletion(stack, tenant.token, id);

    const [failed, succeeded] = await receiver.waitFor(flaky, 2, 30_000);
    const [hung, later] = await receiver.waitFor(hanging, 2, 60_000);
    // One event to two endpoints: one webhook-id and one body everywhere, signed per endpoint.
    const eventId = String(failed?.headers['webhook-id']);
    for (const request of [failed, succeeded, hung, later]) {
      expect(request?.headers['webhook-id']).toBe(eventId);
      expect(request?.body).toBe(failed?.body);
    }
    for (const request of [failed, succeeded])
      verified(flakyEndpoint.secret, request as ReceivedWebhook);
    for (const request of [hung, later])
      verified(hangingEndpoint.secret, request as ReceivedWebhook);
    expect((succeeded?.at ?? 0) - (failed?.at ?? 0)).toBeGreaterThanOrEqual(5000);
    expect((later?.at ?? 0) - (hung?.at ?? 0)).toBeGreaterThanOrEqual(20_000);

    const attempts = async (endpointId: number) =>
      (await attemptsLog(stack.admin, endpointId)).reverse();
    const retryAt = (attempt: LoggedAttempt | undefined) =>
      Date.parse(attempt?.attempted_at ?? '') + (attempt?.duration_ms ?? 0) + 5000;

    const flakyLog = await attempts(flakyEndpoint.id);
    expect(flakyLog).toEqual([
      {
        event_id: eventId,
        type: 'campaign.completed',
        attempt: 2,
        attempted_at: expect.stringMatching(ISO),
        status_code: 200,
        error: null,
        duration_ms: expect.any(Number),
        succeeded: true,
        next_attempt_at: null,
        final: true,
      },
      {
        event_id: eventId,
        type: 'campaign.completed',
        attempt: 1,
        attempted_at: expect.stringMatching(ISO),
        status_code: 500,
        error: 'HTTP 500',
        duration_ms: expect.any(Number),
        succeeded: false,
        next_attempt_at: new Date(retryAt(flakyLog[1])).toISOString(),
        final: false,
      },
    ]);
    const hangingLog = await attempts(hangingEndpoint.id);
    expect(hangingLog).toEqual([
      expect.objectContaining({ attempt: 2, status_code: 200, succeeded: true, final: true }),
      {
        event_id: eventId,
        type: 'campaign.completed',
        attempt: 1,
        attempted_at: expect.stringMatching(ISO),
        status_code: null,
        error: 'timed out after 15 s',
        duration_ms: expect.any(Number),
        succeeded: false,
        next_attempt_at: new Date(retryAt(hangingLog[1])).toISOString(),
        final: false,
      },
    ]);
    expect(hangingLog[1]?.duration_ms).toBeGreaterThanOrEqual(15_000);
    expect(hangingLog[1]?.duration_ms).toBeLessThan(16_000);
  });
});
