import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import {
  ensureStopped,
  type HeraldProcess,
  heraldEnv,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import {
  createTenant,
  openStack,
  registerTestNamespace,
  type Stack,
  type Tenant,
} from '../support/stack.js';

const RECIPIENTS = 1000;
/** Slow enough that a campaign takes seconds and always has submissions in flight. */
const PROVIDER_LATENCY_MS = 300;

interface CampaignView {
  status: string;
  total_recipients: number;
  queued_count: number;
  sent_count: number;
  failed_count: number;
}

/**
 * A `herald worker` process is killed (SIGKILL, no clean shutdown) in the middle of a
 * 1,000-recipient campaign and a new one takes over: every recipient must get the message
 * exactly once and the counters must add up.
 */
describe('a worker killed mid-campaign', { timeout: 180_000 }, () => {
  const namespace = `herald-crash-${randomBytes(4).toString('hex')}`;
  let stack: Stack;
  let tenant: Tenant;
  let simulator: RunningSimulator;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const workers: HeraldProcess[] = [];

  async function startWorker(): Promise<HeraldProcess> {
    const worker = spawnHerald(['worker'], env);
    workers.push(worker);
    await untilRunning(worker, 60_000);
    return worker;
  }

  async function campaign(id: number): Promise<CampaignView> {
    const response = await stack.app.inject({
      method: 'GET',
      url: `/api/v1/messages/${id}`,
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    return response.json().data.message;
  }

  beforeAll(async () => {
    // A namespace of its own, so no worker but this test's ever runs the campaign.
    await registerTestNamespace(namespace);

    stack = await openStack(namespace);
    tenant = await createTenant(stack.admin);
    simulator = await startSimulator({ port: 0 });
    await fetch(`${simulator.url}/v1/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ latency_ms: PROVIDER_LATENCY_MS, receipt: { outcome: 'none' } }),
    });
    await insertProvider(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug: 'carrier',
      name: 'Carrier',
      type: 'simulator',
      requiresSenderId: false,
      settings: { base_url: simulator.url },
    });
    dataDir = await mkdtemp(join(tmpdir(), 'herald-crash-'));
    env = heraldEnv({
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: namespace,
      HERALD_SECRET: inject('secret'),
      HERALD_DATA_DIR: dataDir,
    });
  });

  afterAll(async () => {
    await Promise.all(workers.map(ensureStopped));
    await simulator?.close();
    await stack?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 90_000);

  it('delivers to each recipient exactly once after a new worker takes over', async () => {
    const first = await startWorker();
    const recipients = Array.from(
      { length: RECIPIENTS },
      (_, i) => `+6142${String(i).padStart(7, '0')}`,
    );
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipients, message: 'Your parcel is on its way', provider_slug: 'carrier' },
    });
    expect(response.statusCode).toBe(202);
    const id: number = response.json().data.message.id;

    const atKill = await waitUntil(
      'the campaign to be partly sent',
      async () => {
        const view = await campaign(id);
        return view.sent_count >= 150 ? view : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 20, proc: first },
    );
    first.child.kill('SIGKILL');
    await first.exited;
    expect(atKill.status).toBe('queued');
    expect(atKill.sent_count).toBeLessThan(RECIPIENTS);
    // Submissions were in flight when the worker died: their outcome is what the takeover settles.
    const [inFlight] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from campaign_messages
      where campaign_id = ${id} and status = 'queued' and attempt_provider is not null`;
    expect(inFlight?.count).toBeGreaterThan(0);

    await startWorker();
    const done = await waitUntil(
      'the campaign to complete',
      async () => {
        const view = await campaign(id);
        return view.status === 'completed' ? view : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(done).toMatchObject({
      total_recipients: RECIPIENTS,
      queued_count: 0,
      sent_count: RECIPIENTS,
      failed_count: 0,
    });

    const inbox = (await (await fetch(`${simulator.url}/v1/inbox`)).json()) as {
      messages: { to: string }[];
    };
    expect(inbox.messages.map((message) => message.to).sort()).toEqual([...recipients].sort());
  });
});
