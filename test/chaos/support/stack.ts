import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort, isPortFree } from '../../../cli/embedded/ports.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../../cli/embedded/postgres.js';
import { isAlive } from '../../../cli/embedded/processes.js';
import { findTemporalCli, startTemporalDevServer } from '../../../cli/embedded/temporal.js';
import {
  type HeraldProcess,
  heraldEnv,
  runHerald,
  runHeraldJson,
  spawnHerald,
  untilRunning,
} from '../../support/processes.js';
import { auditLogs, type LogText, rememberSecret } from './secrets.js';
import { log, waitUntil } from './timing.js';

/**
 * The production topology on one machine, every part its own process: an embedded Postgres
 * (pg_ctl, detached), a Temporal dev server on a persistent SQLite file, `herald simulator`, and
 * `herald api` / `herald worker` processes. Each part can be stopped or killed and started again
 * on the same port and data, which is what the scenarios do to it.
 */

export type Role = 'api' | 'worker' | 'simulator';

/** A `herald <role>` process; `killed` marks an exit the chaos suite caused. */
interface RoleProcess {
  name: string;
  role: Role;
  proc: HeraldProcess;
  killed: boolean;
}

export interface Death {
  name: string;
  exit: string;
  stderrTail: string;
}

export interface StackOptions {
  apis?: number;
  workers?: number;
  /** Extra environment for the api and worker processes. */
  env?: Record<string, string>;
}

const open = new Set<ChaosStack>();

/** Every stack still open (the runner closes them on Ctrl-C). */
export function openStacks(): ChaosStack[] {
  return [...open];
}

export class ChaosStack {
  readonly apiUrls: string[] = [];
  private readonly roles = new Map<string, RoleProcess>();
  private readonly exited: RoleProcess[] = [];
  private postgres: EmbeddedPostgres | undefined;
  private postgresFrozen = false;
  /** Where the server writes server.log (outside the data folder when that is closed to it). */
  private clusterDir = '';
  private temporalCli = '';

  private constructor(
    readonly dataDir: string,
    readonly secret: string,
    readonly simulatorUrl: string,
    readonly temporalPort: number,
    private readonly apiPorts: number[],
    private readonly extraEnv: Record<string, string>,
    public databaseUrl = '',
  ) {}

  static async start(options: StackOptions = {}): Promise<ChaosStack> {
    const dataDir = await mkdtemp(join(tmpdir(), 'herald-chaos-'));
    const apiPorts = await distinctFreePorts(options.apis ?? 1);
    const simulatorPort = await freePort();
    const stack = new ChaosStack(
      dataDir,
      randomBytes(32).toString('base64url'),
      `http://127.0.0.1:${simulatorPort}`,
      await freePort(),
      apiPorts,
      { ...options.env },
    );
    open.add(stack);
    rememberSecret('HERALD_SECRET', stack.secret);
    try {
      stack.temporalCli = await findTemporalCli(log);
      await stack.startPostgres();
      await stack.startTemporal();
      const migrated = await runHerald(['migrate'], stack.env());
      if (migrated.code !== 0) throw new Error(`herald migrate failed: ${migrated.stderr}`);
      stack.spawn('simulator', 'simulator', { SIMULATOR_PORT: String(simulatorPort) });
      await waitUntil(
        'the simulator',
        async () => (await ok(`${stack.simulatorUrl}/v1/inbox`)) || undefined,
        30_000,
      );
      const starting: Promise<void>[] = [];
      for (let i = 0; i < (options.workers ?? 1); i++) starting.push(stack.startWorker(i));
      for (let i = 0; i < apiPorts.length; i++) {
        stack.apiUrls.push(`http://127.0.0.1:${apiPorts[i]}`);
        starting.push(stack.startApi(i));
      }
      await Promise.all(starting);
      await waitUntil(
        '/health to answer 200',
        async () => (await ok(`${stack.apiUrls[0]}/health`)) || undefined,
        60_000,
      );
    } catch (error) {
      await stack.close();
      throw error;
    }
    return stack;
  }

  /** The environment of every Herald process of this stack. */
  env(values: Record<string, string> = {}): NodeJS.ProcessEnv {
    return heraldEnv({
      DATABASE_URL: this.databaseUrl,
      TEMPORAL_ADDRESS: `127.0.0.1:${this.temporalPort}`,
      HERALD_SECRET: this.secret,
      HERALD_DATA_DIR: this.dataDir,
      OWN_PROVIDER_URL: this.simulatorUrl,
      SIMULATOR_PORT: new URL(this.simulatorUrl).port,
      // One public address in front of the api replicas: every api answers as the first one, and
      // the workers hand providers receipt URLs on it.
      PUBLIC_URL: `http://127.0.0.1:${this.apiPorts[0]}`,
      // What a deployment logs by default (every request's method and URL), for the log audit.
      LOG_LEVEL: 'info',
      ...this.extraEnv,
      ...values,
    });
  }

  // --- Postgres ---------------------------------------------------------------------------------

  /** Starts the cluster (on its first start, a new one); later starts reuse its data and port. */
  async startPostgres(): Promise<void> {
    const started = await startEmbeddedPostgres({ dataDir: this.dataDir, adoptRunning: false });
    if (this.databaseUrl && started.url !== this.databaseUrl) {
      await started.stop();
      throw new Error(`Postgres came back on ${started.url}, not ${this.databaseUrl}`);
    }
    this.postgres = started;
    this.databaseUrl = started.url;
    this.clusterDir = started.clusterDir;
    rememberSecret('database password', decodeURIComponent(new URL(started.url).password));
  }

  /** A real stop of the server (`pg_ctl stop --mode fast`): connections are cut, the port closes. */
  async stopPostgres(): Promise<void> {
    await this.postgres?.stop();
    this.postgres = undefined;
  }

  /**
   * SIGSTOP to the postmaster, then to every process it forked (backends, checkpointer, WAL
   * writer): the port stays open and connections stay up, but nothing answers, as when the
   * database host stalls. New connections wait in the listen backlog. Undone by `thawPostgres`.
   */
  async freezePostgres(): Promise<void> {
    const postmaster = await this.postmasterPid();
    this.postgresFrozen = true;
    signal(postmaster, 'SIGSTOP');
    // With the postmaster stopped nothing new is forked: its children are a fixed set now.
    for (const child of await childrenOf(postmaster)) signal(child, 'SIGSTOP');
  }

  /** SIGCONT to the postmaster's children, then to the postmaster. */
  async thawPostgres(): Promise<void> {
    const postmaster = await this.postmasterPid();
    for (const child of await childrenOf(postmaster)) signal(child, 'SIGCONT');
    signal(postmaster, 'SIGCONT');
    this.postgresFrozen = false;
  }

  private async postmasterPid(): Promise<number> {
    if (!this.postgres) throw new Error('Postgres is not running');
    const pidFile = join(this.postgres.clusterDir, 'postmaster.pid');
    const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`No postmaster pid in ${pidFile}`);
    return pid;
  }

  /** A short-lived connection of the suite's own, for counting (never held across a fault). */
  async withSql<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(this.databaseUrl, { max: 2, onnotice: () => {}, connect_timeout: 10 });
    try {
      return await fn(sql);
    } finally {
      await sql.end({ timeout: 2 });
    }
  }

  // --- Temporal ---------------------------------------------------------------------------------

  get temporalAddress(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  /** The launcher's dev server (same flags and dynamic config), kept in `<dataDir>/temporal.db`. */
  async startTemporal(): Promise<void> {
    await waitUntil(
      `port ${this.temporalPort} to be free`,
      async () => (await isPortFree(this.temporalPort)) || undefined,
      30_000,
    );
    await startTemporalDevServer({
      cli: this.temporalCli,
      dataDir: this.dataDir,
      port: this.temporalPort,
      namespace: 'default',
      persistent: true,
    });
  }

  /** SIGKILL to the dev server's process group: no clean shutdown. */
  async killTemporal(): Promise<void> {
    const pidFile = join(this.dataDir, 'temporal.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number(await readFile(pidFile, 'utf8'));
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await waitUntil(
      'the Temporal dev server to die',
      async () => (isAlive(pid) ? undefined : true),
      10_000,
    );
    await rm(pidFile, { force: true });
  }

  // --- Herald processes -------------------------------------------------------------------------

  async startWorker(index: number): Promise<void> {
    await this.startRole(`worker-${index}`, 'worker', {});
  }

  async startApi(index: number): Promise<void> {
    const port = String(this.apiPorts[index]);
    await this.startRole(`api-${index}`, 'api', { PORT: port });
  }

  /** `kill -9`. Resolves once the process is gone. */
  async kill(name: string): Promise<void> {
    const role = this.roles.get(name);
    if (!role || role.proc.exit()) return;
    role.killed = true;
    role.proc.child.kill('SIGKILL');
    await role.proc.exited;
  }

  /** SIGSTOP to a Herald process: it holds its connections and does nothing until `thaw`. */
  freeze(name: string): void {
    const pid = this.roles.get(name)?.proc.child.pid;
    if (pid !== undefined) signal(pid, 'SIGSTOP');
  }

  thaw(name: string): void {
    const pid = this.roles.get(name)?.proc.child.pid;
    if (pid !== undefined) signal(pid, 'SIGCONT');
  }

  isRunning(name: string): boolean {
    const role = this.roles.get(name);
    return role !== undefined && role.proc.exit() === undefined;
  }

  /** Processes that exited without the suite killing them, with the end of their stderr. */
  deaths(): Death[] {
    return [...this.exited, ...this.roles.values()]
      .filter((role) => !role.killed && role.proc.exit() !== undefined)
      .map((role) => ({
        name: role.name,
        exit: JSON.stringify(role.proc.exit()),
        stderrTail: role.proc.stderr().slice(-1500),
      }));
  }

  /** Every log of the stack: each Herald process's output, Temporal's and Postgres's logs. */
  async logs(): Promise<LogText[]> {
    const logs: LogText[] = [...this.exited, ...this.roles.values()].map((role) => ({
      name: `${role.name}-${role.proc.child.pid}`,
      text: `${role.proc.stdout()}\n${role.proc.stderr()}`,
    }));
    const files = { temporal: join(this.dataDir, 'temporal.log'), postgres: '' };
    if (this.clusterDir) files.postgres = join(this.clusterDir, 'server.log');
    for (const [name, file] of Object.entries(files)) {
      const text = file && (await readFile(file, 'utf8').catch(() => undefined));
      if (text) logs.push({ name, text });
    }
    return logs;
  }

  /** Standard error of every Herald process so far (for `--keep`). */
  async saveLogs(): Promise<void> {
    for (const role of [...this.exited, ...this.roles.values()]) {
      const file = join(this.dataDir, `${role.name}-${role.proc.child.pid}.log`);
      await writeFile(file, `${role.proc.stdout()}\n--- stderr ---\n${role.proc.stderr()}`);
    }
  }

  private spawn(name: string, role: Role, values: Record<string, string>): RoleProcess {
    const previous = this.roles.get(name);
    if (previous) this.exited.push(previous);
    const started: RoleProcess = {
      name,
      role,
      proc: spawnHerald([role], this.env(values)),
      killed: false,
    };
    this.roles.set(name, started);
    return started;
  }

  private async startRole(name: string, role: Role, values: Record<string, string>) {
    if (this.isRunning(name)) throw new Error(`${name} is already running`);
    const started = this.spawn(name, role, values);
    await untilRunning(started.proc, 120_000);
  }

  // --- Administration through the CLI ------------------------------------------------------------

  /** `herald <args> --json`, failing on a non-zero exit. */
  async admin(args: string[]): Promise<Record<string, unknown>> {
    const result = await runHeraldJson(args, this.env());
    const password = args.indexOf('--password');
    if (password >= 0) rememberSecret('password', args[password + 1] ?? '');
    if (result.code !== 0)
      throw new Error(`herald ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    // Printed once by `key create` and `invite create`: the run's logs must never hold them.
    if (typeof result.json.token === 'string')
      rememberSecret(args[0] === 'invite' ? 'invitation token' : 'api key', result.json.token);
    return result.json;
  }

  /** Stops everything this stack started and removes its data unless `keep`. */
  async close(keep = false): Promise<void> {
    open.delete(this);
    const running = [...this.roles.values()].filter((role) => !role.proc.exit());
    for (const role of running) {
      role.killed = true;
      role.proc.child.kill('SIGKILL');
    }
    await Promise.all(running.map((role) => role.proc.exited));
    if (keep) await this.saveLogs().catch(() => {});
    // A stopped server would never answer pg_ctl's stop.
    if (this.postgresFrozen) await this.thawPostgres().catch(() => {});
    await this.killTemporal().catch(() => {});
    await this.stopPostgres().catch(() => {});
    auditLogs(await this.logs());
    if (keep) log(`kept ${this.dataDir}`);
    else await rm(this.dataDir, { recursive: true, force: true });
  }
}

async function ok(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone meanwhile
  }
}

/** The pids whose parent is `parent`, from /proc (field 4 of /proc/<pid>/stat). */
async function childrenOf(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // The command name, in parentheses, may hold spaces: the fields that count follow its ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent) children.push(pid);
  }
  return children;
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
