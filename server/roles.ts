import { type AddressInfo, createServer as createNetServer } from 'node:net';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { FirstTries } from '../commands/deps.js';
import { type Env, ownProviderUrlOf, publicUrlOf, receiptWindowsOf } from '../config/env.js';
import { DEFAULT_POOL_SIZE, type Sql } from '../db/client.js';
import { startSimulator } from '../providers/simulator/server.js';
import {
  ensureMaintenanceSchedule,
  ensureReceiptReconciliationSchedule,
} from '../temporal/schedules.js';
import { ensureSearchAttributes } from '../temporal/search-attributes.js';
import { OTP_TASK_QUEUE, TASK_QUEUE, WEBHOOK_TASK_QUEUE } from '../workflows/definitions.js';
import { buildApp } from './app.js';
import { startMetricsServer } from './metrics-server.js';
import { startHeraldWorker } from './worker.js';
import { startWorkerProbes } from './worker-probes.js';

/*
 * What each role of a Herald process starts (`herald api`, `herald worker`, `herald simulator`,
 * all three in `herald start`). The launcher in cli/ decides which roles run and where Postgres
 * and Temporal come from; these functions wire the parts together.
 */

/** Registers how to stop a part; parts stop in the reverse order of their start. */
type RegisterStop = (name: string, stop: () => Promise<unknown>) => void;

/** The provider simulator; returns its base URL. */
export async function startSimulatorRole(env: Env, registerStop: RegisterStop): Promise<string> {
  const simulator = await startSimulator({ port: env.SIMULATOR_PORT, host: env.HOST });
  registerStop('simulator', simulator.close);
  return simulator.url;
}

/**
 * The Temporal worker of every task queue, after the search attributes and the maintenance
 * schedule it relies on; returns the queues it polls. `onFailure` runs if the worker stops by
 * itself.
 */
export async function startWorkerRole(options: {
  env: Env;
  secret: string;
  sql: Sql;
  temporal: Client;
  temporalAddress: string;
  registerStop: RegisterStop;
  onFailure: (error: Error) => void;
}): Promise<{
  queues: string[];
  sdkMetricsUrl: string | undefined;
  colocatedClient: Client;
  firstTries: FirstTries;
}> {
  const { env, temporal } = options;
  // The Runtime serves the SDK's worker metrics on loopback; METRICS_PORT passes them on.
  const sdkMetricsAddress =
    env.METRICS_PORT === undefined ? undefined : `127.0.0.1:${await freeLoopbackPort()}`;
  await ensureSearchAttributes(temporal, env.TEMPORAL_NAMESPACE);
  await ensureMaintenanceSchedule(temporal);
  await ensureReceiptReconciliationSchedule(temporal, receiptWindowsOf(env));
  const worker = await startHeraldWorker({
    address: options.temporalAddress,
    namespace: env.TEMPORAL_NAMESPACE,
    sql: options.sql,
    ownProviderUrl: ownProviderUrlOf(env),
    ownProviderMessagesPerSecond: env.OWN_PROVIDER_MESSAGES_PER_SECOND ?? null,
    publicUrl: publicUrlOf(env),
    secret: options.secret,
    retentionDays: env.RETENTION_DAYS,
    allowPrivateWebhookUrls: env.WEBHOOK_ALLOW_PRIVATE_URLS,
    webhookDispatcher: env.WEBHOOK_DISPATCHER,
    sdkMetricsAddress,
  });
  options.registerStop('worker', worker.shutdown);
  let running = true;
  worker.done
    .finally(() => {
      running = false;
    })
    .catch(options.onFailure);
  if (env.WORKER_HEALTH_PORT !== undefined) {
    const probes = await startWorkerProbes({
      port: env.WORKER_HEALTH_PORT,
      host: env.HOST,
      sql: options.sql,
      temporal,
      running: () => running,
    });
    options.registerStop('worker probes', probes.close);
  }
  return {
    queues: [TASK_QUEUE, OTP_TASK_QUEUE, WEBHOOK_TASK_QUEUE],
    sdkMetricsUrl: sdkMetricsAddress && `http://${sdkMetricsAddress}/metrics`,
    colocatedClient: worker.colocatedClient,
    firstTries: worker.firstTries,
  };
}

/** `/metrics` on METRICS_PORT, for every role this process runs (server/metrics-server.ts). */
export async function startMetricsRole(options: {
  env: Env;
  sql: Sql;
  sdkMetricsUrl: string | undefined;
  registerStop: RegisterStop;
}): Promise<string | undefined> {
  const { env } = options;
  if (env.METRICS_PORT === undefined) return undefined;
  const server = await startMetricsServer({
    port: env.METRICS_PORT,
    host: env.HOST,
    sql: options.sql,
    poolMax: DEFAULT_POOL_SIZE,
    temporalSdkMetricsUrl: () => options.sdkMetricsUrl,
  });
  options.registerStop('metrics', server.close);
  return `http://${env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST}:${server.port}/metrics`;
}

/** A port free on loopback now, for a listener that cannot report the one it bound. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The HTTP app (server/app.ts), listening; returns its public URL. */
export async function startApiRole(options: {
  env: Env;
  secret: string;
  sql: Sql;
  temporal: Client;
  /** The first try of a worker in this process (server/worker.ts); none without one. */
  firstTries?: FirstTries;
  registerStop: RegisterStop;
  log: (line: string) => void;
}): Promise<string> {
  const { env, secret, sql, temporal, firstTries } = options;
  const publicUrl = publicUrlOf(env);
  const app = buildApp({ env, publicUrl, secret, sql, temporal, firstTries });
  await app.listen({ port: env.PORT, host: env.HOST });
  options.registerStop('api', () => closeApi(app, options.log));
  return publicUrl;
}

/** How long requests in flight may take to finish once shutdown begins. */
const API_DRAIN_MS = 10_000;

/**
 * Stops accepting requests and waits for those in flight, for at most API_DRAIN_MS: a client
 * holding a request open must not keep the worker, Temporal and Postgres from stopping.
 */
async function closeApi(app: FastifyInstance, log: (line: string) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const drained = app.close().then(() => 'drained' as const);
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), API_DRAIN_MS);
  });
  const outcome = await Promise.race([drained, deadline]);
  clearTimeout(timer);
  if (outcome === 'deadline') {
    log(`The api still had requests in flight after ${API_DRAIN_MS / 1000} s; closing them.`);
    app.server.closeAllConnections();
    await drained;
  }
}
