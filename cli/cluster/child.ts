import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { waitFor } from '../embedded/processes.js';

/**
 * One long-running part of the cluster (a Temporal service, a Herald role) as a child process
 * in its own process group, so that Ctrl-C reaches only the launcher, which stops the parts in
 * order. Its output goes to a log file; the last lines are kept for error messages.
 */
export class ClusterChild {
  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private tail = '';
  private exitStatus: string | undefined;
  private exitedPromise: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly options: { env: NodeJS.ProcessEnv; cwd: string; logFile: string },
  ) {}

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitStatus === undefined;
  }

  /** The exit (code or signal) once it has exited. */
  get exit(): string | undefined {
    return this.exitStatus;
  }

  get output(): string {
    return this.tail;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.tail = '';
    this.exitStatus = undefined;
    this.log = createWriteStream(this.options.logFile, { flags: 'a' });
    this.log.write(`--- ${new Date().toISOString()} ${this.command} ${this.args.join(' ')}\n`);
    const child = spawn(this.command, this.args, {
      cwd: this.options.cwd,
      env: this.options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const collect = (chunk: Buffer) => {
      this.log?.write(chunk);
      this.tail = (this.tail + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exitedPromise = new Promise((resolve) => {
      child.once('error', (error) => {
        this.exitStatus = `spawn error: ${error.message}`;
        resolve();
      });
      child.once('close', (code, signal) => {
        this.exitStatus ??= signal ? `signal ${signal}` : `code ${code}`;
        this.log?.end();
        resolve();
      });
    });
  }

  /** Waits until `probe` answers, failing early when the process exits. */
  async until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    await waitFor(
      `${this.name} ${what}`,
      async () => {
        if (this.exitStatus !== undefined) {
          throw new Error(
            `${this.name} exited (${this.exitStatus}) before ${what}; see ${this.options.logFile}:\n` +
              this.tail.split('\n').slice(-15).join('\n'),
          );
        }
        return (await probe().catch(() => false)) ? true : undefined;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /** `kill -9` of its process group: no clean shutdown. Resolves once it is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.signal('SIGKILL');
    await this.exitedPromise;
  }

  /** SIGTERM, and SIGKILL after `graceMs`. Resolves once it is gone. */
  async stop(graceMs: number): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    const outcome = await Promise.race([this.exitedPromise.then(() => 'gone' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.signal('SIGKILL');
      await this.exitedPromise;
    }
  }

  private signal(name: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, name);
    } catch {
      // already gone
    }
  }
}
