import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { childEnvironment } from '../../config/child-environment.js';
import { ensureDatabase, tableExists } from '../../db/bootstrap.js';
import { ensureSearchAttributes } from '../../temporal/search-attributes.js';
import { searchAttributes } from '../../workflows/definitions.js';
import { isPortFree } from '../embedded/ports.js';
import { run, waitFor } from '../embedded/processes.js';
import { ClusterChild } from './child.js';
import type { TemporalBinaries } from './temporal-build.js';
import {
  type ServicePorts,
  TEMPORAL_SERVICES,
  type TemporalDatabase,
  type TemporalService,
  temporalServerConfig,
} from './temporal-config.js';

/**
 * Temporal as production runs it: frontend, history, matching and the internal worker service,
 * each its own `temporal-server` process on one shared configuration, persistence and
 * visibility on Postgres. The schemas are set up and upgraded with the schema tool first.
 */

/** gRPC status codes (the grpc-js package is not a direct dependency). */
const status = { NOT_FOUND: 5, ALREADY_EXISTS: 6 } as const;
const NAMESPACE_RETENTION = '7 days';
const SERVICE_START_MS = 90_000;
const SERVICE_STOP_GRACE_MS = 15_000;

export interface TemporalClusterOptions {
  binaries: TemporalBinaries;
  /** A URL of the Postgres server whose user may create the two Temporal databases. */
  adminDatabaseUrl: string;
  dataDir: string;
  logDir: string;
  namespace: string;
  ports: Record<TemporalService, ServicePorts>;
  log: (line: string) => void;
  /** Receives each service's stop as it starts (history first, so it is stopped last). */
  register: (name: string, stop: () => Promise<void>) => void;
}

export class TemporalCluster {
  private constructor(
    readonly address: string,
    readonly services: Map<TemporalService, ClusterChild>,
    /** Each service's Prometheus metrics. */
    readonly metricsUrls: Record<TemporalService, string>,
  ) {}

  static async start(options: TemporalClusterOptions): Promise<TemporalCluster> {
    const database = databaseOf(options.adminDatabaseUrl);
    await createDatabases(options.adminDatabaseUrl, database);
    await migrateSchemas(options.binaries, database, options.log);

    for (const service of TEMPORAL_SERVICES) {
      for (const port of Object.values(options.ports[service])) {
        if (!(await isPortFree(port))) {
          throw new Error(`Port ${port} of the Temporal ${service} service is in use.`);
        }
      }
    }
    await mkdir(options.dataDir, { recursive: true });
    await mkdir(options.logDir, { recursive: true });
    const services = new Map<TemporalService, ClusterChild>();
    for (const service of TEMPORAL_SERVICES) {
      const configFile = join(options.dataDir, `temporal-${service}.yaml`);
      const config = temporalServerConfig({
        service,
        database,
        ports: options.ports,
        logLevel: 'warn',
      });
      await writeFile(configFile, JSON.stringify(config, null, 2), { mode: 0o600 });
      const child = new ClusterChild(
        `temporal-${service}`,
        options.binaries.server,
        ['--config-file', configFile, '--allow-no-auth', 'start', '--service', service],
        {
          env: childEnvironment(),
          cwd: options.dataDir,
          logFile: join(options.logDir, `temporal-${service}.log`),
        },
      );
      services.set(service, child);
      child.start();
      options.register(`Temporal ${service}`, () => child.stop(SERVICE_STOP_GRACE_MS));
      // On a new database each service would write the cluster's metadata at once, and the
      // losers exit ("failed to initialize current cluster metadata"): history goes first.
      if (service === 'history') {
        const port = options.ports.history.grpc;
        await child.until('to listen', async () => !(await isPortFree(port)), SERVICE_START_MS);
      }
    }
    const metricsUrls = Object.fromEntries(
      TEMPORAL_SERVICES.map((service) => [
        service,
        `http://127.0.0.1:${options.ports[service].metrics}/metrics`,
      ]),
    ) as Record<TemporalService, string>;
    const cluster = new TemporalCluster(
      `127.0.0.1:${options.ports.frontend.grpc}`,
      services,
      metricsUrls,
    );
    await cluster.untilServing(options.namespace, { create: true });
    return cluster;
  }

  /** `kill -9` of one service's process. */
  async kill(service: TemporalService): Promise<void> {
    await this.service(service).kill();
  }

  /** Starts a service again (same ports, same config) and waits until the cluster serves. */
  async restart(service: TemporalService, namespace: string): Promise<void> {
    this.service(service).start();
    await this.untilServing(namespace, { create: false });
  }

  private service(service: TemporalService): ClusterChild {
    const child = this.services.get(service);
    if (!child) throw new Error(`No Temporal ${service} service`);
    return child;
  }

  /**
   * Every service's process up, the namespace there (created on a new cluster), the search
   * attributes registered and visible, and every history shard answering.
   */
  private async untilServing(namespace: string, options: { create: boolean }): Promise<void> {
    const frontend = this.service('frontend');
    const connection = await waitFor(
      'the Temporal frontend',
      async () => {
        if (frontend.exit)
          throw new Error(`temporal-frontend exited: ${frontend.output.slice(-3000)}`);
        return Connection.connect({ address: this.address, connectTimeout: 1000 }).catch(
          () => undefined,
        );
      },
      { timeoutMs: SERVICE_START_MS },
    );
    try {
      const client = new Client({ connection, namespace });
      const check = (what: string, probe: () => Promise<boolean>) =>
        waitFor(
          what,
          async () => {
            for (const [service, child] of this.services) {
              if (child.exit) {
                throw new Error(
                  `temporal-${service} exited (${child.exit}):\n${child.output.slice(-3000)}`,
                );
              }
            }
            return (await probe().catch(() => false)) ? true : undefined;
          },
          { timeoutMs: SERVICE_START_MS, intervalMs: 250 },
        );
      if (options.create) {
        await check(`namespace ${namespace}`, () => ensureNamespace(connection, namespace));
        await check('the search attributes', async () => {
          await ensureSearchAttributes(client, namespace);
          return hasSearchAttributes(connection, namespace);
        });
      }
      await check('every history shard', () => historyShardsAnswer(connection, namespace));
      await check('visibility', () => client.workflow.count().then(() => true));
    } finally {
      await connection.close();
    }
  }
}

/** Postgres visibility has a fixed number of columns per type (e.g. 10 Keyword, 3 Int). */
async function hasSearchAttributes(connection: Connection, namespace: string): Promise<boolean> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const known = Object.keys(listed.customAttributes ?? {});
  return Object.values(searchAttributes).every((key) => known.includes(key.name));
}

async function ensureNamespace(connection: Connection, namespace: string): Promise<boolean> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code !== status.NOT_FOUND) throw error;
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION),
    });
  } catch (error) {
    if ((error as { code?: number }).code !== status.ALREADY_EXISTS) throw error;
  }
  await connection.workflowService.describeNamespace({ namespace });
  return true;
}

/**
 * A look-up of workflows that do not exist, spread over enough ids to reach every shard with
 * near certainty: NOT_FOUND comes from the shard's owner, so each answered.
 */
async function historyShardsAnswer(connection: Connection, namespace: string): Promise<boolean> {
  const probes = Array.from({ length: 32 }, () =>
    connection.workflowService
      .describeWorkflowExecution({
        namespace,
        execution: { workflowId: `herald-cluster-probe-${randomUUID()}` },
      })
      .then(
        () => true,
        // Not "namespace not found": that comes from a frontend whose cache lacks it yet.
        (error: { code?: number; details?: string }) =>
          error.code === status.NOT_FOUND && !/namespace/i.test(error.details ?? ''),
      ),
  );
  return (await Promise.all(probes)).every(Boolean);
}

function databaseOf(adminUrl: string): TemporalDatabase {
  const url = new URL(adminUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: 'temporal',
    visibilityDatabase: 'temporal_visibility',
  };
}

async function createDatabases(adminUrl: string, database: TemporalDatabase): Promise<void> {
  for (const name of [database.database, database.visibilityDatabase]) {
    await ensureDatabase(adminUrl, name);
  }
}

/** `setup-schema -v 0.0` on a new database, then `update-schema` to this server's version. */
async function migrateSchemas(
  binaries: TemporalBinaries,
  database: TemporalDatabase,
  log: (line: string) => void,
): Promise<void> {
  const schemas = [
    { db: database.database, dir: join(binaries.postgresSchemaDir, 'temporal', 'versioned') },
    {
      db: database.visibilityDatabase,
      dir: join(binaries.postgresSchemaDir, 'visibility', 'versioned'),
    },
  ];
  for (const { db, dir } of schemas) {
    const base = ['--plugin', 'postgres12', '--ep', database.host, '-p', String(database.port)];
    const tool = async (args: string[]) => {
      const result = await run(
        binaries.sqlTool,
        [...base, '-u', database.user, '--db', db, ...args],
        {
          env: childEnvironment({ SQL_PASSWORD: database.password }),
        },
      );
      if (result.code !== 0) {
        throw new Error(
          `temporal-sql-tool ${args[0]} on ${db} failed:\n${result.stdout}${result.stderr}`,
        );
      }
    };
    if (!(await hasSchemaVersionTable(database, db))) {
      log(`Setting up the Temporal schema in database ${db}`);
      await tool(['setup-schema', '-v', '0.0']);
    }
    await tool(['update-schema', '-d', dir]);
  }
}

async function hasSchemaVersionTable(database: TemporalDatabase, db: string): Promise<boolean> {
  const { host, port, user, password } = database;
  return tableExists({ host, port, user, password, database: db }, 'schema_version');
}
