import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../cli/embedded/postgres.js';
import { killProcessesMentioning, processesMentioning, waitUntil } from '../support/processes.js';

/** True once initdb has begun writing a cluster somewhere in the data directory. */
async function clusterBeingMade(dataDir: string): Promise<true | undefined> {
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (entry.isDirectory() && existsSync(join(dataDir, entry.name, 'PG_VERSION'))) return true;
  }
  return undefined;
}

describe('embedded Postgres', { timeout: 120_000 }, () => {
  let dataDir: string | undefined;
  let server: EmbeddedPostgres | undefined;

  afterAll(async () => {
    await server?.stop();
    if (dataDir) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('starts after a first initdb was killed half way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'herald-initdb-'));
    dataDir = dir;
    const first = startEmbeddedPostgres({ dataDir: dir, adoptRunning: false });
    first.catch(() => {}); // awaited below, once initdb is killed
    await waitUntil('initdb to begin the cluster', () => clusterBeingMade(dir), {
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    // What a power cut or `kill -9` of the terminal does to it.
    for (const { pid, cmdline } of await processesMentioning(dir))
      if (cmdline.includes('initdb')) process.kill(pid, 'SIGKILL');
    await expect(first).rejects.toThrow(/initdb failed/);

    server = await startEmbeddedPostgres({ dataDir: dir, adoptRunning: false });
    const sql = postgres(server.url, { max: 1 });
    try {
      expect(await sql`select current_database() as name`).toEqual([{ name: 'herald' }]);
    } finally {
      await sql.end();
    }
    // Nothing half made is left beside the cluster.
    expect((await readdir(dir)).sort()).toEqual(['postgres', 'postgres.json']);
  });

  // Postgres runs as the `postgres` user when Herald runs as root, as in a container or a clone
  // in /root (mode 700): that user cannot enter the checkout, so the cluster must live elsewhere.
  it.skipIf(process.getuid?.() !== 0)(
    'runs as root from a data folder the postgres user cannot enter',
    async () => {
      const closed = await mkdtemp(join(tmpdir(), 'herald-closed-'));
      await chmod(closed, 0o700);
      const checkoutData = join(closed, 'checkout', '.data');
      await mkdir(checkoutData, { recursive: true });
      const closedServer = await startEmbeddedPostgres({
        dataDir: checkoutData,
        adoptRunning: false,
      });
      try {
        expect(closedServer.clusterDir).toMatch(
          /^\/var\/lib\/herald\/data\/checkout-[0-9a-f]{12}\/postgres$/,
        );
        const sql = postgres(closedServer.url, { max: 1 });
        try {
          expect(await sql`select current_user as name`).toEqual([{ name: 'herald' }]);
        } finally {
          await sql.end();
        }
      } finally {
        await closedServer.stop();
        await rm(join(closedServer.clusterDir, '..'), { recursive: true, force: true });
        await rm(closed, { recursive: true, force: true });
      }
    },
  );
});
