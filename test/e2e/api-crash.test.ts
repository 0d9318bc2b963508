import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits } from '../../db/credits.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { simulatorProvider } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

/** The provider answers a submission 3 s after taking it: the request is in flight meanwhile. */
const PROVIDER_LATENCY_MS = 3000;
const IN_PROGRESS = {
  message:
    'A request with this Idempotency-Key is still being processed. Retry with the same key shortly.',
};

/**
 * A `herald api` process is killed (SIGKILL) while it holds an OTP send's Idempotency-Key. The
 * key's lease follows its holder, so another api (this test's) takes the retry over within
 * about 5 s, with a Retry-After that says how long to wait, and the code is sent once.
 */
describe('an api killed mid-request', { timeout: 120_000 }, () => {
  let stack: Stack;
  let tenant: Tenant;
  let slow: RunningSimulator;
  let dataDir: string;
  let api: HeraldProcess | undefined;
  let baseUrl: string;

  beforeAll(async () => {
    stack = await openStack();
    tenant = await createTenant(stack.admin);
    await addCredits(stack.sql, tenant.workspaceId, 10);
    slow = await simulatorProvider(stack, tenant.workspaceId, 'slow', {
      behaviour: { latency_ms: PROVIDER_LATENCY_MS, receipt: { outcome: 'none' } },
    });
    dataDir = await mkdtemp(join(tmpdir(), 'herald-api-crash-'));
    const [port] = (await freePorts(1)) as [number];
    baseUrl = `http://127.0.0.1:${port}`;
    api = spawnHerald(
      ['api'],
      heraldEnv({
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        HERALD_SECRET: inject('secret'),
        HERALD_DATA_DIR: dataDir,
        PORT: String(port),
      }),
    );
    await untilRunning(api, 60_000);
  });

  afterAll(async () => {
    await ensureStopped(api);
    await slow?.close();
    await stack?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('lets another api serve the retry within about 5 s, sending the code once', async () => {
    const key = `api-crash-${Date.now()}`;
    const recipient = `+6143${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;
    const payload = { recipient, purpose: 'login', provider_slug: 'slow' };
    const inFlight = fetch(`${baseUrl}/api/v1/otp/send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify(payload),
    }).catch((error: unknown) => error);

    // Killed once it holds the key with its request saved, while the provider is still answering.
    const requestId = await waitUntil(
      'the api to save the request under the key',
      async () => {
        const [row] = await stack.sql<{ resourceId: string | null }[]>`
          select resource_id from idempotency_keys
          where workspace_id = ${tenant.workspaceId} and key = ${key} and status = 'processing'`;
        return row?.resourceId ?? undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, proc: api },
    );
    await sleep(500);
    api?.child.kill('SIGKILL');
    await api?.exited;
    const killedAt = Date.now();
    expect(await inFlight).toBeInstanceOf(Error);

    const refusals: number[] = [];
    let served: Awaited<ReturnType<Stack['app']['inject']>> | undefined;
    while (!served && Date.now() - killedAt < 15_000) {
      const response = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/otp/send',
        headers: { authorization: `Bearer ${tenant.token}`, 'idempotency-key': key },
        payload,
      });
      if (response.statusCode === 409) {
        expect(response.json()).toEqual(IN_PROGRESS);
        refusals.push(Number(response.headers['retry-after']));
        await sleep(250);
      } else served = response;
    }
    const servedAfterMs = Date.now() - killedAt;

    expect(served?.statusCode).toBe(202);
    expect(served?.json().data).toMatchObject({
      request_id: requestId,
      status: 'accepted',
      provider: 'slow',
    });
    // The dead api's lease was at most 5 s long when it died (renewed every 1.5 s).
    expect(servedAfterMs).toBeLessThan(6500);
    expect(refusals.length).toBeGreaterThan(0);
    for (const retryAfter of refusals) {
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(5);
    }
    const inbox = await fetch(`${slow.url}/v1/inbox?to=${encodeURIComponent(recipient)}`);
    expect(((await inbox.json()) as { messages: unknown[] }).messages).toHaveLength(1);
  });
});
