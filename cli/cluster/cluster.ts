import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, isPortFree } from '../embedded/ports.js';
import { startEmbeddedPostgres } from '../embedded/postgres.js';
import { run } from '../embedded/processes.js';
import { ClusterChild } from './child.js';
import { findOrBuildTemporalServer } from './temporal-build.js';
import { TemporalCluster } from './temporal-cluster.js';
import { type ServicePorts, TEMPORAL_SERVICES, type TemporalService } from './temporal-config.js';

/**
 * The production shape on one machine, every part its own process: Postgres (embedded, or the
 * given URL), the Temporal cluster (cli/cluster/temporal-cluster.ts), `herald simulator`, and
 * several `herald worker` and `herald api` processes. Used by `herald cluster` and by the
 * cluster test suite, which kills and restarts parts of it.
 */

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HERALD_START_MS = 120_000;
/** The worker drains its activities on SIGTERM; the api waits up to 10 s for requests. */
const HERALD_STOP_GRACE_MS = 45_000;

export interface ClusterOptions {
  dataDir: string;
  /** Unset: an embedded Postgres in `<dataDir>/postgres`. */
  databaseUrl?: string;
  secret: string;
  namespace: string;
  apiPorts: number[];
  workers: number;
  simulatorPort: number;
  /** The Temporal frontend's gRPC port; the other services take free ports. */
  temporalPort: number;
  /** The environment of every Herald process (the caller's, with Herald's settings). */
  heraldEnv: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Receives each part's stop as soon as it exists; they are stopped in reverse order. */
  register: (name: string, stop: () => Promise<void>) => void;
}

export class Cluster {
  readonly heraldProcesses = new Map<string, ClusterChild>();

  private constructor(
    private readonly options: ClusterOptions,
    readonly databaseUrl: string,
    readonly temporal: TemporalCluster,
    readonly logDir: string,
  ) {}

  get apiUrls(): string[] {
    return this.options.apiPorts.map((port) => `http://127.0.0.1:${port}`);
  }

  get simulatorUrl(): string {
    return `http://127.0.0.1:${this.options.simulatorPort}`;
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const dataDir = resolve(options.dataDir);
    const logDir = join(dataDir, 'logs');
    await mkdir(logDir, { recursive: true });
    const binaries = await findOrBuildTemporalServer(options.log);

    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const postgres = await startEmbeddedPostgres({
        dataDir,
        adoptRunning: true,
        log: options.log,
        registerStop: (stop) => options.register('Postgres', stop),
      });
      databaseUrl = postgres.url;
    }

    const temporal = await TemporalCluster.start({
      binaries,
      adminDatabaseUrl: databaseUrl,
      dataDir: join(dataDir, 'temporal'),
      logDir,
      namespace: options.namespace,
      ports: await servicePorts(options.temporalPort),
      log: options.log,
      register: options.register,
    });

    const cluster = new Cluster(options, databaseUrl, temporal, logDir);
    const migrated = await run(process.execPath, ['bin/herald.js', 'migrate'], {
      cwd: PROJECT_ROOT,
      env: cluster.heraldEnv({}),
    });
    if (migrated.code !== 0) throw new Error(`herald migrate failed:\n${migrated.stderr}`);

    await cluster.startHerald('simulator', 'simulator', {});
    const starting: Promise<void>[] = [];
    for (let i = 0; i < options.workers; i++) starting.push(cluster.startWorker(i));
    await Promise.all(starting);
    await Promise.all(options.apiPorts.map((_, i) => cluster.startApi(i)));
    return cluster;
  }

  /** The environment of every Herald process of this cluster, with `values` on top. */
  heraldEnv(values: Record<string, string>): NodeJS.ProcessEnv {
    return {
      ...this.options.heraldEnv,
      DATABASE_URL: this.databaseUrl,
      TEMPORAL_ADDRESS: this.temporal.address,
      TEMPORAL_NAMESPACE: this.options.namespace,
      HERALD_SECRET: this.options.secret,
      SIMULATOR_PORT: String(this.options.simulatorPort),
      // One public address in front of the replicas (the first api's unless given): receipt
      // callbacks the workers hand to providers, and the apis' OAuth issuer, name it.
      PUBLIC_URL: this.options.heraldEnv.PUBLIC_URL || (this.apiUrls[0] as string),
      ...values,
    };
  }

  async startWorker(index: number): Promise<void> {
    await this.startHerald(`worker-${index}`, 'worker', {});
  }

  async startApi(index: number): Promise<void> {
    const port = this.options.apiPorts[index];
    if (port === undefined) throw new Error(`No api ${index}`);
    await this.startHerald(`api-${index}`, 'api', { PORT: String(port) });
  }

  /** `kill -9` of a Herald process (`api-0`, `worker-1`, `simulator`…). */
  async kill(name: string): Promise<void> {
    await this.heraldProcesses.get(name)?.kill();
  }

  /** Herald processes that are not running, with their exit and the end of their output. */
  exited(): { name: string; exit: string; output: string }[] {
    return [...this.heraldProcesses.values()]
      .filter((child) => !child.running)
      .map((child) => ({
        name: child.name,
        exit: child.exit ?? 'not started',
        output: child.output.slice(-2000),
      }));
  }

  private async startHerald(
    name: string,
    role: 'api' | 'worker' | 'simulator',
    values: Record<string, string>,
  ): Promise<void> {
    let child = this.heraldProcesses.get(name);
    if (!child) {
      child = new ClusterChild(name, process.execPath, ['bin/herald.js', role], {
        cwd: PROJECT_ROOT,
        env: this.heraldEnv(values),
        logFile: join(this.logDir, `${name}.log`),
      });
      this.heraldProcesses.set(name, child);
      const started = child;
      this.options.register(name, () => started.stop(HERALD_STOP_GRACE_MS));
    }
    child.start();
    const ready =
      role === 'api'
        ? () => isOk(`http://127.0.0.1:${values.PORT}/health`)
        : role === 'simulator'
          ? () => isOk(`${this.simulatorUrl}/v1/inbox`)
          : async () => child.output.includes('Herald is running');
    await child.until('to be ready', ready, HERALD_START_MS);
  }
}

/**
 * The frontend on the given port, every other port free right now. Membership ports are stored
 * in a smallint column (cluster_membership.rpc_port): they must be below 32768, where the OS's
 * ephemeral ports do not reach.
 */
async function servicePorts(frontendPort: number): Promise<Record<TemporalService, ServicePorts>> {
  const taken = new Set<number>([frontendPort]);
  const next = async (pick: () => Promise<number>) => {
    for (;;) {
      const port = await pick();
      if (!taken.has(port) && (await isPortFree(port))) {
        taken.add(port);
        return port;
      }
    }
  };
  const any = () => next(freePort);
  const membership = () => next(async () => 20_000 + Math.floor(Math.random() * 12_000));
  const ports = {} as Record<TemporalService, ServicePorts>;
  for (const service of TEMPORAL_SERVICES) {
    ports[service] =
      service === 'frontend'
        ? {
            grpc: frontendPort,
            membership: await membership(),
            metrics: await any(),
            http: await any(),
          }
        : { grpc: await any(), membership: await membership(), metrics: await any() };
  }
  return ports;
}

async function isOk(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await response.arrayBuffer();
  return response.ok;
}
