import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { Cluster } from '../../cli/cluster/cluster.js';
import { freePort } from '../../cli/embedded/ports.js';
import { Lifecycle } from '../../cli/lifecycle.js';
import type { ChaosStack } from '../chaos/support/stack.js';
import { freePorts, heraldEnv, runHeraldJson } from '../support/processes.js';

/**
 * `herald cluster`'s own launcher (cli/cluster/cluster.ts) in the test process, so the suite can
 * kill and restart its parts: the Temporal services as separate `temporal-server` processes on
 * Postgres, two `herald api` and two `herald worker` processes, the simulator.
 */
export class ClusterUnderTest {
  private constructor(
    readonly cluster: Cluster,
    private readonly lifecycle: Lifecycle,
    readonly dataDir: string,
  ) {}

  static async start(): Promise<ClusterUnderTest> {
    const dataDir = await mkdtemp(join(tmpdir(), 'herald-cluster-'));
    const lifecycle = new Lifecycle((line) => process.stderr.write(`[cluster] ${line}\n`));
    const apiPorts = await freePorts(2);
    try {
      const cluster = await Cluster.start({
        dataDir,
        secret: randomBytes(32).toString('base64url'),
        namespace: 'default',
        apiPorts,
        workers: 2,
        simulatorPort: await freePort(),
        temporalPort: await freePort(),
        heraldEnv: heraldEnv({
          HERALD_DATA_DIR: dataDir,
          // The webhook test's receiver listens on loopback.
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          WEBHOOK_DISPATCHER: 'true',
          MCP_ENABLED: 'true',
        }),
        log: (line) => process.stderr.write(`[cluster] ${line}\n`),
        register: (name, stop) => lifecycle.add(name, stop),
      });
      return new ClusterUnderTest(cluster, lifecycle, dataDir);
    } catch (error) {
      await lifecycle.shutdown();
      await rm(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  get apiUrls(): string[] {
    return this.cluster.apiUrls;
  }

  get simulatorUrl(): string {
    return this.cluster.simulatorUrl;
  }

  /** `herald <args> --json` against the cluster, failing on a non-zero exit. */
  async admin(args: string[]): Promise<Record<string, unknown>> {
    const result = await runHeraldJson(args, this.cluster.heraldEnv({}));
    if (result.code !== 0)
      throw new Error(`herald ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.json;
  }

  /** A short-lived connection of the suite's own, for counting. */
  async withSql<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(this.cluster.databaseUrl, { max: 2, onnotice: () => {} });
    try {
      return await fn(sql);
    } finally {
      await sql.end({ timeout: 2 });
    }
  }

  /**
   * For the chaos suite's counting helpers (test/chaos/support), which use only `admin`,
   * `apiUrls`, `simulatorUrl` and `withSql` of their stack.
   */
  asStack(): ChaosStack {
    return this as unknown as ChaosStack;
  }

  async close(): Promise<void> {
    await this.lifecycle.shutdown();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
