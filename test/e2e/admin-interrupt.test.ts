import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  heraldEnv,
  interrupt,
  killProcessesMentioning,
  leftoverProcesses,
  processesMentioning,
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
});
