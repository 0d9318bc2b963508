import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { type RunningWorker, startHeraldWorker } from '../../server/worker.js';
import { lookup, numbers, postMessages, waitForCompletion } from '../support/send.js';
import {
  createTenant,
  openStack,
  registerTestNamespace,
  type Stack,
  type Tenant,
} from '../support/stack.js';

/**
 * One workspace backs the campaign queue up; another's single message must not wait behind it.
 * A worker of its own, with two campaign slots, in a namespace of its own.
 */
const namespace = `herald-fairness-${Date.now()}`;
const BUSY_CAMPAIGNS = 10;

describe('workspace fairness on the campaign queue', () => {
  let stack: Stack;
  let busy: Tenant;
  let quiet: Tenant;
  let simulator: RunningSimulator;
  let worker: RunningWorker;

  beforeAll(async () => {
    await registerTestNamespace(namespace);
    stack = await openStack(namespace);
    [busy, quiet] = [await createTenant(stack.admin), await createTenant(stack.admin)];
    simulator = await startSimulator({ port: 0 });
    // Each chunk of 100 takes about a second: two batches of 50 at 500 ms.
    await fetch(`${simulator.url}/v1/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ latency_ms: 500, receipt: { outcome: 'none' } }),
    });
    for (const tenant of [busy, quiet])
      await insertProvider(stack.sql, {
        workspaceId: tenant.workspaceId,
        slug: 'carrier',
        name: 'Carrier',
        type: 'simulator',
        requiresSenderId: false,
        settings: { base_url: simulator.url },
      });
    worker = await startHeraldWorker({
      address: inject('temporalAddress'),
      namespace,
      sql: stack.sql,
      ownProviderUrl: simulator.url,
      publicUrl: 'http://herald.test',
      secret: inject('secret'),
      webhookDispatcher: false,
      mainActivitySlots: 2,
    });
  }, 120_000);

  afterAll(async () => {
    await worker?.shutdown();
    await simulator?.close();
    await stack?.close();
  }, 60_000);

  it("serves another workspace's one message ahead of a backlog", async () => {
    const busyIds: number[] = [];
    for (let i = 0; i < BUSY_CAMPAIGNS; i++) {
      const response = await postMessages(stack, busy.token, {
        recipients: numbers(200),
        message: 'Backlog',
        provider_slug: 'carrier',
      });
      expect(response.json().data.message.status).toBe('queued');
      busyIds.push(response.json().data.message.id);
    }
    const started = Date.now();
    const response = await postMessages(stack, quiet.token, {
      recipients: numbers(1),
      message: 'Me first',
      provider_slug: 'carrier',
    });
    expect(response.statusCode).toBe(202);
    const quietDone = await waitForCompletion(stack, quiet.token, response.json().data.message.id);
    const quietSeconds = (Date.now() - started) / 1000;
    expect(quietDone).toMatchObject({ status: 'completed', sent_count: 1 });

    // 20 busy chunks of about a second on two slots: in arrival order the quiet message would
    // come after most of them.
    const busyLeft = await Promise.all(busyIds.map((id) => lookup(stack, busy.token, id)));
    const queuedLeft = busyLeft.reduce((sum, campaign) => sum + campaign.queued_count, 0);
    expect({ quietSeconds: quietSeconds < 5, queuedLeft: queuedLeft >= 1000 }).toEqual({
      quietSeconds: true,
      queuedLeft: true,
    });
    await expect
      .poll(
        async () =>
          (await Promise.all(busyIds.map((id) => lookup(stack, busy.token, id)))).every(
            (campaign) => campaign.status === 'completed',
          ),
        { timeout: 120_000, interval: 500 },
      )
      .toBe(true);
  }, 180_000);
});
