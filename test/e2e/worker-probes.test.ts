import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  spawnHerald,
  untilRunning,
} from '../support/processes.js';
import { registerTestNamespace } from '../support/stack.js';

/**
 * A `herald worker` process with WORKER_HEALTH_PORT serves the probes the api serves (issue 26,
 * item 4): `/livez` while it runs, `/readyz` with Postgres, Temporal, the migrations and itself.
 */
describe('the worker’s probes', { timeout: 120_000 }, () => {
  // A namespace of its own, so this worker never takes another test's work.
  const namespace = `herald-probes-${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  let worker: HeraldProcess | undefined;
  let probeUrl: string;

  beforeAll(async () => {
    await registerTestNamespace(namespace);
    dataDir = await mkdtemp(join(tmpdir(), 'herald-worker-probes-'));
    const [port] = (await freePorts(1)) as [number];
    probeUrl = `http://127.0.0.1:${port}`;
    worker = spawnHerald(
      ['worker'],
      heraldEnv({
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: namespace,
        HERALD_SECRET: inject('secret'),
        HERALD_DATA_DIR: dataDir,
        WORKER_HEALTH_PORT: String(port),
      }),
    );
    await untilRunning(worker, 60_000);
  }, 90_000);

  afterAll(async () => {
    await ensureStopped(worker);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const probe = async (path: string) => {
    const response = await fetch(`${probeUrl}${path}`);
    return [response.status, await response.json()];
  };

  it('answers live and ready with everything up', async () => {
    expect(await probe('/livez')).toEqual([200, { status: 'ok' }]);
    expect(await probe('/readyz')).toEqual([
      200,
      {
        status: 'ready',
        checks: { postgres: 'up', temporal: 'up', migrations: 'current', worker: 'running' },
      },
    ]);
    expect(await probe('/health')).toEqual([404, { message: 'Not found.' }]);
  });
});
