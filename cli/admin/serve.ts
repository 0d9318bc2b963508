import type { FirstTries } from '../../commands/deps.js';
import { type Env, parseEnv, tracingOf } from '../../config/env.js';
import { resolveSecret } from '../../config/secret.js';
import { createSql, isDatabaseUnavailable, recoverFromClosedSocketWrite } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { redactSecrets } from '../../security/log-redaction.js';
import {
  startApiRole,
  startMetricsRole,
  startSimulatorRole,
  startWorkerRole,
} from '../../server/roles.js';
import { startTracing } from '../../telemetry/tracing.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { withDatabaseUrl } from '../context.js';
import { startEmbeddedPostgres } from '../embedded/postgres.js';
import { findTemporalCli, startTemporalDevServer } from '../embedded/temporal.js';
import { Lifecycle } from '../lifecycle.js';
import { UsageError } from '../output.js';
import { writeStackFile } from '../running-stack.js';

type Role = 'api' | 'worker' | 'simulator';

/** The launcher's own lines (start-up, shutdown, unexpected errors), secrets redacted. */
const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);

/**
 * Runs the given roles. With `embed`, Postgres and Temporal are started locally when
 * DATABASE_URL / TEMPORAL_ADDRESS are unset; without it they must be configured.
 */
async function serve(roles: Role[], embed: boolean): Promise<void> {
  const env = parseEnv();
  if (roles.length === 1 && roles[0] === 'simulator') return serveSimulator(env);
  if (!embed) {
    const missing = (['DATABASE_URL', 'TEMPORAL_ADDRESS'] as const).filter((name) => !env[name]);
    if (missing.length > 0) {
      throw new UsageError(
        `${missing.join(' and ')} must be set for \`herald ${roles.join(' ')}\`, which runs against ` +
          'configured dependencies. Use `herald start` to run everything with embedded Postgres and Temporal.',
      );
    }
  }
  const secret = await resolveSecret(env);
  const lifecycle = new Lifecycle(log);
  lifecycle.handleSignals();
  handleUncaughtErrors(lifecycle);
  // First in, last out: the spans of the parts' own shutdown are exported too.
  const tracing = startTracing(tracingOf(env, defaultServiceName(roles)));
  if (tracing) lifecycle.add('tracing', tracing.shutdown);
  try {
    const { lines, temporalAddress, publicUrl } = await startParts(env, secret, roles, lifecycle);
    if (lifecycle.isStopping) return;
    // The local stack tells the commands of a second terminal where it runs (cli/running-stack.ts).
    if (embed && publicUrl) {
      try {
        const removeStackFile = await writeStackFile(env.HERALD_DATA_DIR, {
          pid: process.pid,
          publicUrl,
          temporalAddress,
          temporalNamespace: env.TEMPORAL_NAMESPACE,
        });
        lifecycle.add('stack file', removeStackFile);
      } catch (error) {
        // Only the second terminal's convenience is lost: its commands then need TEMPORAL_ADDRESS.
        log(
          `Could not write the stack file in ${env.HERALD_DATA_DIR}: ${(error as Error).message}`,
        );
      }
    }
    log(
      ['', 'Herald is running', ...lines.map((line) => `  ${line}`), 'Press Ctrl-C to stop.'].join(
        '\n',
      ),
    );
  } catch (error) {
    // Interrupted: the parts stopped under the start-up, and the signal handler exits.
    if (lifecycle.isStopping) return;
    await lifecycle.shutdown();
    throw error;
  }
}

/** OTEL_SERVICE_NAME's default: herald-api, herald-worker, or herald for several roles. */
function defaultServiceName(roles: Role[]): string {
  const served = roles.filter((role) => role !== 'simulator');
  return served.length === 1 ? `herald-${served[0]}` : 'herald';
}

/** How long an ordered stop after an unexpected error may take before the process just exits. */
const FORCED_EXIT_MS = 60_000;

/**
 * What nothing caught. One error is known and harmless once handled: postgres.js's write to a
 * connection that lost its socket (db/guarded-pool.ts), after which the database pools are
 * replaced and the process goes on. A database call that nothing awaited and that failed because
 * Postgres is away is logged: the outage is handled where calls are awaited. Anything else is a
 * bug whose effects are unknown (half-updated state, a lost timer): the process stops in order,
 * exit code 1, and its supervisor starts a fresh one; Temporal retries the worker's activities.
 */
function handleUncaughtErrors(lifecycle: Lifecycle): void {
  let stopping = false;
  const stop = (what: string, error: unknown) => {
    log(`${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (stopping) return;
    stopping = true;
    log('Stopping after an unexpected error.');
    setTimeout(() => process.exit(1), FORCED_EXIT_MS).unref();
    lifecycle.shutdown().finally(() => process.exit(1));
  };
  process.on('uncaughtException', (error) => {
    if (recoverFromClosedSocketWrite(error)) {
      log('postgres.js wrote to a closed connection; replacing the database pool.');
      return;
    }
    stop('Uncaught exception', error);
  });
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      log(`A database call nothing awaited failed: ${(reason as Error).message}`);
      return;
    }
    stop('Unhandled rejection', reason);
  });
}

async function serveSimulator(env: Env): Promise<void> {
  const lifecycle = new Lifecycle(log);
  lifecycle.handleSignals();
  const url = await startSimulatorRole(env, (name, stop) => lifecycle.add(name, stop));
  log(`Provider simulator listening on ${url}`);
}

async function startParts(
  env: Env,
  secret: string,
  roles: Role[],
  lifecycle: Lifecycle,
): Promise<{ lines: string[]; temporalAddress: string; publicUrl?: string }> {
  const lines: string[] = [];
  const registerStop = (name: string, stop: () => Promise<unknown>) => lifecycle.add(name, stop);
  if (roles.includes('simulator')) {
    const url = await startSimulatorRole(env, registerStop);
    lines.push(`Simulator    ${url}  (inbox: ${url}/v1/inbox)`);
  }
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    const postgres = await startEmbeddedPostgres({
      dataDir: env.HERALD_DATA_DIR,
      adoptRunning: true,
      log,
      registerStop: (stop) => lifecycle.add('Postgres', stop),
    });
    databaseUrl = postgres.url;
    lines.push(`Postgres     embedded in ${postgres.clusterDir}`);
  }

  let temporalAddress = env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    const server = await startTemporalDevServer({
      cli: await findTemporalCli(log),
      dataDir: env.HERALD_DATA_DIR,
      port: env.TEMPORAL_DEV_PORT,
      uiPort: env.TEMPORAL_UI_PORT,
      namespace: env.TEMPORAL_NAMESPACE,
      persistent: true,
      registerStop: (stop) => lifecycle.add('Temporal dev server', stop),
    });
    temporalAddress = server.address;
    lines.push(`Temporal UI  ${server.uiUrl}`);
  }
  lines.push(`Temporal     ${temporalAddress} (namespace ${env.TEMPORAL_NAMESPACE})`);

  await applyMigrations(databaseUrl);
  const sql = createSql(databaseUrl, { log });
  lifecycle.add('database pool', () => sql.end({ timeout: 5 }));

  const temporal = await connectTemporalClient(temporalAddress, env.TEMPORAL_NAMESPACE);
  lifecycle.add('Temporal client', () => temporal.connection.close());

  let sdkMetricsUrl: string | undefined;
  // With a worker beside it, the api starts runs through the worker's connection, eagerly.
  let apiTemporal = temporal;
  let firstTries: FirstTries | undefined;
  if (roles.includes('worker')) {
    const worker = await startWorkerRole({
      env,
      secret,
      sql,
      temporal,
      temporalAddress,
      registerStop,
      onFailure: (error) => {
        log(`The worker stopped: ${error.message}`);
        lifecycle.shutdown().then(() => process.exit(1));
      },
    });
    sdkMetricsUrl = worker.sdkMetricsUrl;
    apiTemporal = worker.colocatedClient;
    firstTries = worker.firstTries;
    const quoted = worker.queues.map((queue) => `"${queue}"`);
    lines.push(`Worker       polling task queues ${quoted.join(', ')}`);
  }

  let publicUrl: string | undefined;
  if (roles.includes('api')) {
    publicUrl = await startApiRole({
      env,
      secret,
      sql,
      temporal: apiTemporal,
      firstTries,
      registerStop,
      log,
    });
    lines.unshift(
      `API          ${publicUrl}  (health: ${publicUrl}/health)`,
      ...(env.CONSOLE_ENABLED ? [`Console      ${publicUrl}/console`] : []),
      ...(env.MCP_ENABLED ? [`MCP          ${publicUrl}/mcp`] : []),
    );
  }
  const metricsUrl = await startMetricsRole({ env, sql, sdkMetricsUrl, registerStop });
  if (metricsUrl) lines.push(`Metrics      ${metricsUrl}`);
  return { lines, temporalAddress, publicUrl };
}

export const start = () => serve(['api', 'worker', 'simulator'], true);
export const api = () => serve(['api'], false);
export const worker = () => serve(['worker'], false);
export const simulator = () => serve(['simulator'], false);

export async function migrateCommand(): Promise<{ applied: string[] }> {
  return withDatabaseUrl(parseEnv(), applyMigrations);
}

/** On a pool of its own: DDL may take longer than the statement timeout of the service's pool. */
async function applyMigrations(url: string): Promise<{ applied: string[] }> {
  const sql = createSql(url, { max: 1, unboundedStatements: true });
  try {
    return { applied: (await migrate(sql)).map((migration) => migration.name) };
  } finally {
    await sql.end();
  }
}
