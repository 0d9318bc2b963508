import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  interrupt,
  killProcessesMentioning,
  launcherEnv,
  leftoverProcesses,
  processesMentioning,
  spawnHerald,
  waitUntil,
} from '../support/processes.js';

/**
 * Ctrl-C while `herald start` is still starting: the embedded servers run detached, so whatever
 * has been spawned so far must be stopped by the launcher, or it outlives it.
 */
describe('herald start interrupted during start-up', { timeout: 150_000 }, () => {
  const dataDirs: string[] = [];
  const launchers: HeraldProcess[] = [];

  afterAll(async () => {
    for (const launcher of launchers) await ensureStopped(launcher);
    for (const dataDir of dataDirs) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it.each([
    // Between the server's spawn by `pg_ctl start --wait` and the launcher moving on.
    ['the Postgres server', /postgres.* -D \S*\/postgres /],
    // Booting: it takes a few seconds to answer.
    ['the Temporal dev server', /temporal.* start-dev /],
  ])('stops %s when SIGINT comes as it starts', async (server, commandLine) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'herald-interrupt-'));
    dataDirs.push(dataDir);
    const launcher = spawnHerald(['start'], (await launcherEnv(dataDir)).env);
    launchers.push(launcher);
    await waitUntil(
      `${server} to be spawned`,
      async () => {
        const running = await processesMentioning(dataDir);
        return running.some(({ cmdline }) => commandLine.test(cmdline)) ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 10, proc: launcher },
    );

    const exit = await interrupt(launcher, 30_000);
    expect(exit, `no exit within 30 s of SIGINT:\n${launcher.stderr()}`).toBeDefined();
    expect(launcher.stderr(), 'SIGINT came after start-up').not.toContain('Herald is running');
    // The lifecycle's convention for a signal: exit 0 once everything is stopped.
    expect(exit?.code, launcher.stderr()).toBe(0);
    expect(await leftoverProcesses(dataDir)).toEqual([]);
  });
});
