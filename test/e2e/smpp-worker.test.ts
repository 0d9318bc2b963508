/**
 * `herald worker` and its SMPP binds, as a separate process against the test stack (in the
 * namespace no other worker polls): it binds every active SMPP provider at start-up without
 * anything to send, so replies arrive while it is idle, and unbinds gracefully on SIGINT.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { providerCreate, providerDisable } from '../../cli/admin/providers.js';
import {
  ensureStopped,
  type HeraldProcess,
  heraldEnv,
  interrupt,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { numbers } from '../support/send.js';
import { type SmscPeer, smppProviderOptions, startSmscPeer } from '../support/smsc-peer.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const ACCOUNT = { systemId: 'herald-w', password: 'w0rk-e2e' };

describe('herald worker and SMPP', { timeout: 120_000 }, () => {
  let stack: Stack;
  let tenant: Tenant;
  let peer: SmscPeer;
  let dataDir: string;
  let worker: HeraldProcess | undefined;

  beforeAll(async () => {
    stack = await openStack();
    tenant = await createTenant(stack.admin);
    peer = await startSmscPeer(ACCOUNT);
    await providerCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'smsc',
      ...smppProviderOptions(peer, ACCOUNT),
    });
    dataDir = await mkdtemp(join(tmpdir(), 'herald-smpp-worker-'));
  });

  afterAll(async () => {
    await ensureStopped(worker);
    await providerDisable(stack.admin, { workspace: tenant.slug, slug: 'smsc' }).catch(() => {});
    await peer?.close();
    await stack?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('binds at start-up, takes replies while idle, and unbinds on SIGINT', async () => {
    worker = spawnHerald(
      ['worker'],
      heraldEnv({
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('isolatedNamespace'),
        HERALD_SECRET: inject('secret'),
        HERALD_DATA_DIR: dataDir,
      }),
    );
    await untilRunning(worker, 90_000);
    // Nothing has been sent through this provider: the bind is the worker's own.
    await waitUntil('a bind', async () => (peer.bound > 0 ? true : undefined), {
      timeoutMs: 10_000,
      proc: worker,
    });
    expect(peer.binds.filter((bind) => bind.accepted)[0]).toMatchObject({
      command: 'bind_transceiver',
      systemId: ACCOUNT.systemId,
      interfaceVersion: 0x34,
    });
    expect(peer.parts).toEqual([]);

    const [recipient] = numbers(1) as [string];
    expect(await peer.sendReply({ from: recipient, to: 'Herald', text: 'STOP' })).toBe(0);
    expect(
      await stack.sql`
        select source from opt_outs where workspace_id = ${tenant.workspaceId}
          and recipient = ${recipient}`,
    ).toEqual([{ source: 'reply' }]);

    expect(peer.unbinds).toBe(0);
    const exit = await interrupt(worker, 30_000);
    expect(exit?.code, worker.stderr()).toBe(0);
    expect(peer.unbinds).toBe(1);
  });
});
