import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyCreate } from '../../cli/commands/keys.js';
import { userCreate } from '../../cli/commands/users.js';
import { workspaceCreate } from '../../cli/commands/workspaces.js';
import { freePort } from '../../cli/embedded/ports.js';
import { startEmbeddedPostgres } from '../../cli/embedded/postgres.js';
import { findTemporalCli, startTemporalDevServer } from '../../cli/embedded/temporal.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';

/**
 * The production shape on one machine: real Postgres and a Temporal dev server, with
 * `herald api`, `herald worker` and `herald simulator` as separate processes.
 */
export interface BenchStack {
  apiUrl: string;
  /** A second api process, sharing PUBLIC_URL, with `secondApiEnv` on top (when asked for). */
  secondApiUrl: string | undefined;
  simulatorUrl: string;
  sql: Sql;
  /** A bearer token with every ability, for a fresh workspace. */
  token: string;
  close(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The bench workspace's owner, for flows that sign in (OAuth). */
export const BENCH_USER = { email: 'bench@herald.test', password: 'bench pass 1' };

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

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

export interface BenchStackOptions {
  /** Extra environment for every role. */
  env?: Record<string, string>;
  /** When set, a second `herald api` runs with this environment on top. */
  secondApiEnv?: Record<string, string>;
}

export async function startBenchStack(options: BenchStackOptions = {}): Promise<BenchStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'herald-bench-'));
  const postgres = await startEmbeddedPostgres({ dataDir, adoptRunning: false });
  const temporal = await startTemporalDevServer({
    cli: await findTemporalCli(log),
    dataDir,
    port: await freePort(),
    namespace: 'default',
    persistent: false,
  });
  // The bench's own bulk writes (a million seeded rows) are not held to the service's 3 s bound.
  const sql = createSql(postgres.url, { unboundedStatements: true });
  await migrate(sql);

  const [apiPort, simulatorPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
  const secret = randomBytes(32).toString('base64url');
  const env = {
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    HERALD_SECRET: secret,
    HERALD_DATA_DIR: dataDir,
    PORT: String(apiPort),
    PUBLIC_URL: apiUrl,
    SIMULATOR_PORT: String(simulatorPort),
    OWN_PROVIDER_URL: simulatorUrl,
    ...options.env,
  };
  const roles = ['simulator', 'worker', 'api'].map((role) => spawnRole(role, env));
  let secondApiUrl: string | undefined;
  if (options.secondApiEnv) {
    const port = await freePort();
    secondApiUrl = `http://127.0.0.1:${port}`;
    roles.push(spawnRole('api', { ...env, ...options.secondApiEnv, PORT: String(port) }));
  }
  await waitForOk(`${simulatorUrl}/v1/behaviour`);
  await waitForOk(`${apiUrl}/health`);
  if (secondApiUrl) await waitForOk(`${secondApiUrl}/health`);

  const admin = { env: parseEnv(env), secret, sql };
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

  return {
    apiUrl,
    secondApiUrl,
    simulatorUrl,
    sql,
    token,
    async close() {
      for (const child of roles.reverse()) await stopRole(child);
      await sql.end();
      await temporal.stop();
      await postgres.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
