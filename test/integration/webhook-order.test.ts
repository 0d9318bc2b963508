/**
 * A message's webhook events reach an endpoint in the order they happened (docs/webhooks.md "Webhooks"):
 * `message.delivered` never before its `message.sent`, even when the sent event's first attempt
 * fails and is retried, or when the receipt overtook the provider's answer to the submission (both
 * events are then written by one statement). Real stack: the shared worker's dispatcher and
 * webhookWorkflow, a local receiving server, receipts posted to the api as the provider would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { receiptSignature } from '../support/receipts.js';
import {
  type InboxMessage,
  inbox,
  numbers,
  sendQueued,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

let stack: Stack;
let receiver: WebhookReceiver;
const simulators: RunningSimulator[] = [];

beforeAll(async () => {
  stack = await openStack();
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  for (const simulator of simulators) await simulator.close();
  await stack?.close();
});

/** An endpoint for the message events, as an operator who allows private URLs. */
async function createEndpoint(tenant: Tenant, path: string): Promise<void> {
  const context = { ...stack.admin, env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true } };
  await webhookCreate(context, {
    workspace: tenant.slug,
    url: `${receiver.url}${path}`,
    events: 'message.sent,message.delivered',
  });
}

/** A simulator of the tenant's own that sends no receipts: the test posts them. */
async function quietSimulator(tenant: Tenant, latencyMs = 0): Promise<RunningSimulator> {
  const simulator = await simulatorProvider(stack, tenant.workspaceId, 'ordered', {
    behaviour: { latency_ms: latencyMs, receipt: { outcome: 'none' } },
  });
  simulators.push(simulator);
  return simulator;
}

async function postDelivered(tenant: Tenant, message: InboxMessage): Promise<void> {
  const receipt = {
    id: message.id,
    reference: message.reference,
    status: 'delivered' as const,
    error_code: null,
    at: new Date().toISOString(),
  };
  const response = await stack.app.inject({
    method: 'POST',
    url: '/webhooks/providers/ordered',
    headers: receiptSignature(tenant.workspaceId, 'ordered', receipt),
    payload: receipt,
  });
  expect(response.statusCode).toBe(204);
}

interface Arrival {
  type: string;
  seq: number;
  webhookId: string;
  answered: number;
}

/** The requests as they arrived, with what the receiver answered each (its plan, else 200). */
function arrivals(requests: ReceivedWebhook[], failedFirst: number): Arrival[] {
  return requests.map((request, index) => {
    const payload = JSON.parse(request.body) as { type: string; data: { message_seq: number } };
    return {
      type: payload.type,
      seq: payload.data.message_seq,
      webhookId: String(request.headers['webhook-id']),
      answered: index < failedFirst ? 500 : 200,
    };
  });
}

describe('the order of a message’s events at an endpoint', () => {
  it('holds message.delivered back while message.sent is retried, then sends it', {
    timeout: 60_000,
  }, async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/retried/${tenant.slug}`;
    await createEndpoint(tenant, path);
    const simulator = await quietSimulator(tenant);
    receiver.plan(path, [500]);
    const [recipient] = numbers(1) as [string];
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: [recipient], message: 'Your table is ready', provider_slug: 'ordered' },
      { total: 1 },
    );
    await waitForCompletion(stack, tenant.token, id);

    // message.sent got a 500 and waits 5 s for its retry; the receipt comes meanwhile.
    const [refused] = await receiver.waitFor(path, 1);
    expect(JSON.parse(refused?.body ?? '{}').type).toBe('message.sent');
    const [message] = await inbox(simulator.url, recipient);
    await postDelivered(tenant, message as InboxMessage);

    const requests = await receiver.waitFor(path, 3, 30_000);
    const [sentAgain, delivered] = requests.slice(1);
    expect(arrivals(requests, 1).map(({ type, answered }) => ({ type, answered }))).toEqual([
      { type: 'message.sent', answered: 500 },
      { type: 'message.sent', answered: 200 },
      { type: 'message.delivered', answered: 200 },
    ]);
    expect(sentAgain?.headers['webhook-id']).toBe(refused?.headers['webhook-id']);
    expect((sentAgain?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(5000);
    expect(delivered?.at).toBeGreaterThanOrEqual(sentAgain?.at ?? Infinity);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.at(path)).toHaveLength(3);
  });

  it('sends message.sent first when the receipt overtook the submission’s answer', {
    timeout: 60_000,
  }, async () => {
    const tenant = await createTenant(stack.admin);
    const path = `/overtaken/${tenant.slug}`;
    await createEndpoint(tenant, path);
    // The simulator keeps each message in its inbox 500 ms before answering the submission.
    const simulator = await quietSimulator(tenant, 500);
    const recipients = numbers(12);
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Doors open at 7', provider_slug: 'ordered' },
      { total: 12 },
    );
    // Each receipt as soon as the provider has the message: before Herald knows it was sent.
    await Promise.all(
      recipients.map(async (recipient) => {
        let message: InboxMessage | undefined;
        await expect
          .poll(
            async () => {
              [message] = await inbox(simulator.url, recipient);
              return message;
            },
            { timeout: 20_000, interval: 20 },
          )
          .toBeDefined();
        await postDelivered(tenant, message as InboxMessage);
      }),
    );
    await waitForCompletion(stack, tenant.token, id);
    const overtaken = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from webhook_events s join webhook_events d
        on d.workspace_id = s.workspace_id and d.data->'message_seq' = s.data->'message_seq'
      where s.workspace_id = ${tenant.workspaceId} and s.type = 'message.sent'
        and d.type = 'message.delivered' and d.created_at = s.created_at`;
    // Written together at least for some (the test is about them): one statement, one timestamp.
    expect(overtaken[0]?.count).toBeGreaterThan(0);

    const received = arrivals(await receiver.waitFor(path, 24, 30_000), 0);
    for (let seq = 1; seq <= 12; seq++) {
      const ofMessage = received.filter((arrival) => arrival.seq === seq);
      expect(ofMessage.map((arrival) => arrival.type)).toEqual([
        'message.sent',
        'message.delivered',
      ]);
    }
    expect(new Set(received.map((arrival) => arrival.webhookId)).size).toBe(24);
  });
});
