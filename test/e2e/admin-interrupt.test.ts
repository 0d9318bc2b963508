import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  heraldEnv,
  interrupt,
  killProcessesMentioning,
  leftoverProcesses,
  processesMentioning,
  runHerald,
  runHeraldJson,
  spawnHerald,
  waitUntil,
} from '../support/processes.js';

/**
 * One-off commands (`herald migrate`, admin commands) start the embedded cluster when nothing
 * runs it: they stop it when done, and when interrupted while it starts.
 */
describe('one-off commands on the embedded cluster', { timeout: 150_000 }, () => {
  const dataDirs: string[] = [];
  const commands: HeraldProcess[] = [];

  async function freshEnv() {
    const dataDir = await mkdtemp(join(tmpdir(), 'herald-oneoff-'));
    dataDirs.push(dataDir);
    return { dataDir, env: heraldEnv({ HERALD_DATA_DIR: dataDir }) };
  }

  afterAll(async () => {
    for (const command of commands) await ensureStopped(command);
    for (const dataDir of dataDirs) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('an admin command stops the cluster it started', async () => {
    const { dataDir, env } = await freshEnv();
    const created = await runHeraldJson(['workspace', 'create', '--name', 'Once'], env);
    expect(created.json).toMatchObject({ slug: 'once' });
    expect(await leftoverProcesses(dataDir)).toEqual([]);
  });

  it('herald migrate stops the cluster when SIGINT comes as it starts', async () => {
    const { dataDir, env } = await freshEnv();
    const migrate = spawnHerald(['migrate'], env);
    commands.push(migrate);
    await waitUntil(
      'the Postgres server to be spawned',
      async () => {
        const running = await processesMentioning(dataDir);
        return running.some(({ cmdline }) => /postgres.* -D \S*\/postgres /.test(cmdline))
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 10, proc: migrate },
    );
    const exit = await interrupt(migrate, 30_000);
    expect(exit, `no exit within 30 s of SIGINT:\n${migrate.stderr()}`).toBeDefined();
    expect(exit?.code, migrate.stderr()).toBe(130);
    expect(await leftoverProcesses(dataDir)).toEqual([]);
  });

  // What made the test above fail on a busy machine: Postgres stopped as postgres.js ran the array
  // type query it sends first on every connection and never awaits (porsager/postgres#1192).
  it('a connection reset under postgres.js own type query fails the command, not the process', async () => {
    const proxy = await resetAtTypeQuery(inject('databaseUrl'));
    try {
      const result = await runHerald(['migrate', '--json'], heraldEnv({ DATABASE_URL: proxy.url }));
      expect(proxy.resets()).toBe(1);
      expect(result.stderr).not.toMatch(/uncaught|Unhandled/i);
      expect({ code: result.code, stdout: result.stdout }).toEqual({
        code: 1,
        stdout: `${JSON.stringify({ error: { type: 'Error', message: 'read ECONNRESET' } })}\n`,
      });
    } finally {
      await proxy.close();
    }
  });
});

/**
 * A TCP proxy to the database of `databaseUrl` that resets the first connection sending the
 * array type query of postgres.js, as a server stopping at that moment does.
 */
async function resetAtTypeQuery(databaseUrl: string) {
  const target = new URL(databaseUrl);
  let resets = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    }
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (resets === 0 && chunk.includes('pg_catalog.pg_type')) {
        resets++;
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.href,
    resets: () => resets,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
