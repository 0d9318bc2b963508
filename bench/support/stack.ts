import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyCreate } from '../../cli/admin/keys.js';
import { userCreate } from '../../cli/admin/users.js';
import { workspaceCreate } from '../../cli/admin/workspaces.js';
import { Cluster } from '../../cli/cluster/cluster.js';
import { NUM_HISTORY_SHARDS, TEMPORAL_SERVICES } from '../../cli/cluster/temporal-config.js';
import { operatorActor } from '../../cli/context.js';
import { freePort } from '../../cli/embedded/ports.js';
import { startEmbeddedPostgres } from '../../cli/embedded/postgres.js';
import { findTemporalCli, startTemporalDevServer } from '../../cli/embedded/temporal.js';
import { Lifecycle } from '../../cli/lifecycle.js';
import { setGuard } from '../../commands/fraud-guard/settings.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';

/**
 * Herald as it runs in production, on one machine: real Postgres, `herald api`, `herald worker`
 * and `herald simulator` as separate processes, on either Temporal shape: the dev server (one
 * process) or the cluster of `npm run cluster`.
 */
export interface BenchStack {
  apiUrl: string;
  /** A second api process, sharing PUBLIC_URL, with `secondApiEnv` on top (when asked for). */
  secondApiUrl: string | undefined;
  simulatorUrl: string;
  sql: Sql;
  /** The bench workspace's slug. */
  workspace: string;
  /** A bearer token with every ability, for a fresh workspace. */
  token: string;
  shape: BenchShape;
  workers: number;
  /** The Temporal frontend Herald runs on, where the bench measures Temporal's own floor. */
  temporalAddress: string;
  /** One sentence on what ran, for the JSON. */
  setup: string;
  /** Where Postgres and Temporal keep their data for the run. */
  dataDir: string;
  /** host:port of each Herald process's /metrics (with `metrics: true`). */
  metricsTargets: string[];
  close(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The bench workspace's owner, for flows that sign in (OAuth). */
export const BENCH_USER = { email: 'bench@herald.test', password: 'bench pass 1' };

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/**
 * The bench workspace's API rate limits, lifted: the benchmarks drive one key far past the default
 * 100 requests/s per key and 300/s per workspace (the floor route at ~1,800/s, 1-recipient sends
 * and verifies at concurrency 32), and their figures measure capacity, not the limit.
 * `bench:otp` measures the limiter's own cost (floor_route_c32_rate_limit_ratio) and the OTP
 * guard's at its defaults (otp_send_c32_guard_ratio).
 */
export const LIFTED_API_RATES = { keyRate: 'off', workspaceRate: 'off' } as const;

/** `BENCH_CPU_PROFILE=worker` (or api, simulator) writes that role's CPU profile to bench/profiles. */
const profiled = process.env.BENCH_CPU_PROFILE;

function spawnRole(role: string, env: NodeJS.ProcessEnv): ChildProcess {
  const profile = role === profiled ? ['--cpu-prof', '--cpu-prof-dir', 'bench/profiles'] : [];
  const child = spawn(process.execPath, [...profile, 'bin/herald.js', role], {
    cwd: repoRoot,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    // Their output (the Temporal core's warnings included) goes to stderr: stdout is the JSON.
    stdio: ['ignore', 2, 2],
  });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGINT') log(`herald ${role} exited (${code ?? signal})`);
  });
  return child;
}

/** SIGINT, as Ctrl-C would, and waits for the process to exit. */
export async function stopRole(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

async function waitForOk(url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export type BenchShape = 'dev' | 'cluster';

export interface BenchStackOptions {
  /** Extra environment for every role. */
  env?: Record<string, string>;
  /** When set, a second `herald api` runs with this environment on top. */
  secondApiEnv?: Record<string, string>;
  /** Default: `BENCH_SHAPE` (dev or cluster), else dev. */
  shape?: BenchShape;
  /** `herald worker` processes. Default: `BENCH_WORKERS`, else 1. */
  workers?: number;
  /** Every api and worker serves /metrics on a METRICS_PORT of its own. */
  metrics?: boolean;
}

/** What the Herald roles run on: Postgres and Temporal, and how to stop them. */
interface Underneath {
  databaseUrl: string;
  temporalAddress: string;
  /** The Herald environment every role gets (before `options.env`). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Postgres embedded, Temporal's dev server (one process, SQLite in memory). */
async function devShape(dataDir: string): Promise<Underneath> {
  const postgres = await startEmbeddedPostgres({ dataDir, adoptRunning: false });
  const temporal = await startTemporalDevServer({
    cli: await findTemporalCli(log),
    dataDir,
    port: await freePort(),
    namespace: 'default',
    persistent: false,
  });
  return {
    databaseUrl: postgres.url,
    temporalAddress: temporal.address,
    env: { DATABASE_URL: postgres.url, TEMPORAL_ADDRESS: temporal.address },
    async stop() {
      await temporal.stop();
      await postgres.stop();
    },
  };
}

/**
 * Postgres embedded, and the Temporal cluster of `npm run cluster` on it (four server processes,
 * persistence and visibility on Postgres). The cluster's own Herald processes are only its
 * simulator; the bench starts the api and worker roles itself, as on the dev shape.
 */
async function clusterShape(dataDir: string, simulatorPort: number): Promise<Underneath> {
  const lifecycle = new Lifecycle(log);
  try {
    const cluster = await Cluster.start({
      dataDir,
      secret: randomBytes(32).toString('base64url'),
      namespace: 'default',
      apiPorts: [],
      workers: 0,
      simulatorPort,
      temporalPort: await freePort(),
      heraldEnv: { ...process.env, LOG_LEVEL: 'warn' },
      log,
      register: (name, stop) => lifecycle.add(name, stop),
    });
    return {
      databaseUrl: cluster.databaseUrl,
      temporalAddress: cluster.temporal.address,
      env: { DATABASE_URL: cluster.databaseUrl, TEMPORAL_ADDRESS: cluster.temporal.address },
      stop: () => lifecycle.shutdown(),
    };
  } catch (error) {
    await lifecycle.shutdown();
    throw error;
  }
}

export async function startBenchStack(options: BenchStackOptions = {}): Promise<BenchStack> {
  const shape = options.shape ?? (process.env.BENCH_SHAPE === 'cluster' ? 'cluster' : 'dev');
  const workers = options.workers ?? Number(process.env.BENCH_WORKERS ?? 1);
  const dataDir = await mkdtemp(join(tmpdir(), 'herald-bench-'));
  const [apiPort, simulatorPort] = [await freePort(), await freePort()];
  const underneath =
    shape === 'cluster' ? await clusterShape(dataDir, simulatorPort) : await devShape(dataDir);
  // The bench's own bulk writes (a million seeded rows) are not held to the service's 3 s bound.
  const sql = createSql(underneath.databaseUrl, { unboundedStatements: true });
  await migrate(sql);

  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
  const secret = randomBytes(32).toString('base64url');
  const env = {
    ...underneath.env,
    HERALD_SECRET: secret,
    HERALD_DATA_DIR: dataDir,
    PORT: String(apiPort),
    PUBLIC_URL: apiUrl,
    SIMULATOR_PORT: String(simulatorPort),
    OWN_PROVIDER_URL: simulatorUrl,
    ...options.env,
  };
  const metricsTargets: string[] = [];
  const metricsEnv = async (role: string) => {
    if (!options.metrics || role === 'simulator') return {};
    const port = await freePort();
    metricsTargets.push(`127.0.0.1:${port}`);
    return { METRICS_PORT: String(port) };
  };
  const roles: ChildProcess[] = [];
  for (const role of [
    ...(shape === 'dev' ? ['simulator'] : []),
    ...Array.from({ length: workers }, () => 'worker'),
    'api',
  ])
    roles.push(spawnRole(role, { ...env, ...(await metricsEnv(role)) }));
  let secondApiUrl: string | undefined;
  if (options.secondApiEnv) {
    const port = await freePort();
    secondApiUrl = `http://127.0.0.1:${port}`;
    roles.push(spawnRole('api', { ...env, ...options.secondApiEnv, PORT: String(port) }));
  }
  await waitForOk(`${simulatorUrl}/v1/behaviour`);
  await waitForOk(`${apiUrl}/health`);
  if (secondApiUrl) await waitForOk(`${secondApiUrl}/health`);

  const admin = { env: parseEnv(env), secret, sql, actor: operatorActor() };
  const slug = 'bench';
  await workspaceCreate(admin, { name: 'Bench', slug });
  await userCreate(admin, {
    workspace: slug,
    email: BENCH_USER.email,
    password: BENCH_USER.password,
    role: 'owner',
  });
  const { token } = (
    await keyCreate(admin, {
      workspace: slug,
      user: BENCH_USER.email,
      abilities: 'messages:send,messages:read,otp:send,otp:verify',
    })
  ).json as { token: string };
  await setGuard({ sql }, { workspace: slug, ...LIFTED_API_RATES }, admin.actor);

  return {
    apiUrl,
    secondApiUrl,
    simulatorUrl,
    sql,
    workspace: slug,
    token,
    shape,
    workers,
    temporalAddress: underneath.temporalAddress,
    dataDir,
    metricsTargets,
    setup: `herald api, ${workers} herald worker${workers === 1 ? '' : 's'} and the simulator as separate processes; embedded Postgres; ${
      shape === 'cluster'
        ? `a Temporal cluster (${TEMPORAL_SERVICES.join(', ')} as ${TEMPORAL_SERVICES.length} processes on Postgres, ${NUM_HISTORY_SHARDS} history shards)`
        : 'the Temporal dev server'
    }`,
    async close() {
      for (const child of roles.reverse()) await stopRole(child);
      await sql.end();
      await underneath.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
