import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort } from '../../cli/embedded/ports.js';
import { startEmbeddedPostgres } from '../../cli/embedded/postgres.js';
import { findTemporalCli, startTemporalDevServer } from '../../cli/embedded/temporal.js';
import { createSql } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { startSimulator } from '../../providers/simulator/server.js';
import { startHeraldWorker } from '../../server/worker.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { ensureSearchAttributes } from '../../temporal/search-attributes.js';

/** Namespace kept free of the shared worker, for tests that run their own worker processes. */
export const ISOLATED_NAMESPACE = 'herald-isolated';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
    isolatedNamespace: string;
    secret: string;
    simulatorUrl: string;
    /** Where the worker tells providers to post receipts: tests that need them listen here. */
    apiPort: number;
  }
}

/**
 * One real Postgres (DATABASE_URL or embedded) and one real Temporal dev server for the whole
 * run, started as the launcher starts them, with a worker on the `default` namespace.
 */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(join(tmpdir(), 'herald-test-'));
  const log = (line: string) => process.stderr.write(`[test stack] ${line}\n`);
  const postgres = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir, adoptRunning: true });
  const databaseUrl = process.env.DATABASE_URL ?? (postgres?.url as string);
  const temporal = await startTemporalDevServer({
    cli: await findTemporalCli(log),
    dataDir,
    port: await freePort(),
    namespace: ISOLATED_NAMESPACE,
    persistent: false,
  });
  const sql = createSql(databaseUrl);
  await migrate(sql);
  const client = await connectTemporalClient(temporal.address, 'default');
  await ensureSearchAttributes(client, 'default');
  await client.connection.close();
  const simulator = await startSimulator({ port: await freePort() });
  const apiPort = await freePort();
  const secret = randomBytes(32).toString('base64url');
  const worker = await startHeraldWorker({
    address: temporal.address,
    namespace: 'default',
    sql,
    ownProviderUrl: simulator.url,
    publicUrl: `http://127.0.0.1:${apiPort}`,
    secret,
    // Webhook tests receive on 127.0.0.1; the SSRF refusals are tested with workers of their own.
    allowPrivateWebhookUrls: true,
  });

  project.provide('databaseUrl', databaseUrl);
  project.provide('temporalAddress', temporal.address);
  project.provide('isolatedNamespace', ISOLATED_NAMESPACE);
  project.provide('secret', secret);
  project.provide('simulatorUrl', simulator.url);
  project.provide('apiPort', apiPort);

  return async () => {
    await worker.shutdown();
    await simulator.close();
    await sql.end();
    await temporal.stop();
    await postgres?.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
