import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../cli/embedded/ports.js';
import { envSchema } from '../../config/env.js';

/** Helpers for tests that run `bin/herald.js` as real child processes. */

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The test runner's environment without any of Herald's own variables (so nothing leaks in from
 * the developer's shell or the test stack), with LOG_LEVEL=warn and the given values on top.
 */
export function heraldEnv(values: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(envSchema.shape)) delete env[name];
  env.LOG_LEVEL = 'warn';
  // Processes that share the run's database must not take its webhook events: the shared worker
  // (namespace default) dispatches them. A test that wants a dispatcher sets it back.
  env.WEBHOOK_DISPATCHER = 'false';
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Whether something accepts connections on 127.0.0.1:`port` right now. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** `count` distinct ports that are free right now. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let attempt = 0; ports.size < count && attempt < 100; attempt++) ports.add(await freePort());
  if (ports.size < count) throw new Error(`Could not find ${count} distinct free ports`);
  return [...ports];
}

export interface LauncherPorts {
  port: number;
  temporalPort: number;
  temporalUiPort: number;
  simulatorPort: number;
}

/** The environment of `herald start` on `dataDir`, on ports free right now, with `values` on top. */
export async function launcherEnv(
  dataDir: string,
  values: Record<string, string | undefined> = {},
): Promise<{ env: NodeJS.ProcessEnv; ports: LauncherPorts }> {
  const [port, temporalPort, temporalUiPort, simulatorPort] = (await freePorts(4)) as [
    number,
    number,
    number,
    number,
  ];
  const env = heraldEnv({
    HERALD_DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_DEV_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(temporalUiPort),
    SIMULATOR_PORT: String(simulatorPort),
    ...values,
  });
  return { env, ports: { port, temporalPort, temporalUiPort, simulatorPort } };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface HeraldProcess {
  readonly child: ChildProcess;
  readonly args: string[];
  stdout(): string;
  stderr(): string;
  /** The exit, once the process has exited. */
  exit(): Exit | undefined;
  readonly exited: Promise<Exit>;
}

/** Starts `node bin/herald.js <args>`, collecting its output; `stdin`: what it reads, then end. */
export function spawnHerald(args: string[], env: NodeJS.ProcessEnv, stdin?: string): HeraldProcess {
  const child = spawn(process.execPath, ['bin/herald.js', ...args], {
    cwd: repoRoot,
    env,
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    child.once('error', (error) => {
      stderr += `\n[spawn error] ${error.message}`;
      exit = { code: null, signal: null };
      resolve(exit);
    });
    // 'close' rather than 'exit': the output is complete by then.
    child.once('close', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  return {
    child,
    args,
    stdout: () => stdout,
    stderr: () => stderr,
    exit: () => exit,
    exited,
  };
}

function describeProcess(proc: HeraldProcess): string {
  return (
    `herald ${proc.args.join(' ')} (pid ${proc.child.pid}, exit ${JSON.stringify(proc.exit())})\n` +
    `--- stdout ---\n${proc.stdout().slice(-4000)}\n--- stderr ---\n${proc.stderr().slice(-4000)}`
  );
}

function timeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export interface RunResult extends Exit {
  stdout: string;
  stderr: string;
}

/** Runs a short-lived command to completion; it is killed if it takes longer than `timeoutMs`. */
export async function runHerald(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 90_000,
  stdin?: string,
): Promise<RunResult> {
  const proc = spawnHerald(args, env, stdin);
  const exit = await timeout(proc.exited, timeoutMs);
  if (!exit) {
    proc.child.kill('SIGKILL');
    await timeout(proc.exited, 5_000);
    throw new Error(`Timed out after ${timeoutMs} ms: ${describeProcess(proc)}`);
  }
  return { ...exit, stdout: proc.stdout(), stderr: proc.stderr() };
}

export interface JsonRunResult extends RunResult {
  json: Record<string, unknown>;
}

/** Runs an admin command with `--json`; its stdout must be exactly one JSON object. */
export async function runHeraldJson(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs?: number,
): Promise<JsonRunResult> {
  const result = await runHerald([...args, '--json'], env, timeoutMs);
  const lines = result.stdout.split('\n').filter((line) => line.trim() !== '');
  let json: unknown;
  try {
    if (lines.length !== 1) throw new Error(`${lines.length} lines`);
    json = JSON.parse(lines[0] as string);
  } catch (error) {
    throw new Error(
      `herald ${args.join(' ')} --json did not print exactly one JSON object (${(error as Error).message}); ` +
        `exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
    );
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error(`herald ${args.join(' ')} --json printed ${result.stdout}, not an object`);
  return { ...result, json: json as Record<string, unknown> };
}

/** Polls `probe` until it returns a value, failing after `timeoutMs` or when `proc` exits. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; proc?: HeraldProcess },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (options.proc?.exit())
      throw new Error(`Waiting for ${what}, the process exited: ${describeProcess(options.proc)}`);
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      const output = options.proc ? `\n${describeProcess(options.proc)}` : '';
      throw new Error(
        `Timed out after ${options.timeoutMs} ms waiting for ${what}${cause}${output}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}

export interface HttpResult {
  status: number;
  body: unknown;
}

/** One bounded HTTP GET; the body is parsed as JSON when it is JSON. */
export async function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  return { status: response.status, body };
}

/** Waits until a serving role (`start`, `api`, `worker`) prints that Herald is running. */
export async function untilRunning(proc: HeraldProcess, timeoutMs = 120_000): Promise<void> {
  await waitUntil(
    `herald ${proc.args.join(' ')} to be running`,
    async () => (proc.stderr().includes('Herald is running') ? true : undefined),
    { timeoutMs, proc },
  );
}

/** Sends SIGINT and waits up to `timeoutMs` for the exit; `undefined` if it did not exit. */
export async function interrupt(
  proc: HeraldProcess,
  timeoutMs = 30_000,
): Promise<(Exit & { elapsedMs: number }) | undefined> {
  const started = Date.now();
  if (!proc.exit()) proc.child.kill('SIGINT');
  const exit = await timeout(proc.exited, timeoutMs);
  return exit && { ...exit, elapsedMs: Date.now() - started };
}

/** For afterAll: stops the process however it takes (SIGINT, then SIGKILL). Never throws. */
export async function ensureStopped(proc: HeraldProcess | undefined): Promise<void> {
  if (!proc || proc.exit()) return;
  if (await interrupt(proc, 30_000)) return;
  proc.child.kill('SIGKILL');
  await timeout(proc.exited, 5_000);
}

/** Processes whose command line mentions `text` (e.g. a data directory), this one excepted. */
export async function processesMentioning(
  text: string,
): Promise<{ pid: number; cmdline: string }[]> {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (raw.includes(text)) found.push({ pid, cmdline: raw.replaceAll('\0', ' ').trim() });
  }
  return found;
}

/** Polls until no process mentions `text`, returning those still there after `timeoutMs`. */
export async function leftoverProcesses(
  text: string,
  timeoutMs = 5_000,
): Promise<{ pid: number; cmdline: string }[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await processesMentioning(text);
    if (found.length === 0 || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * For afterAll: ends the processes started on behalf of a test (their command line names the
 * test's own temporary directory) that a failed test left behind, by pid.
 */
export async function killProcessesMentioning(text: string): Promise<void> {
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  };
  const found = await processesMentioning(text);
  if (found.length === 0) return;
  for (const { pid } of found) signal(pid, 'SIGTERM');
  const remaining = await leftoverProcesses(text, 10_000);
  for (const { pid } of remaining) signal(pid, 'SIGKILL');
  await leftoverProcesses(text, 5_000);
}
