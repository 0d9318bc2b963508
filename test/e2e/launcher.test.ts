import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  httpGet,
  interrupt,
  killProcessesMentioning,
  launcherEnv,
  leftoverProcesses,
  processesMentioning,
  runHeraldJson,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';

/**
 * `herald start` as a newcomer runs it: nothing configured, so it embeds Postgres and a Temporal
 * dev server in its data directory, serves api + worker, and leaves nothing behind on Ctrl-C.
 */
describe('herald start (the launcher)', { timeout: 150_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  let uiPort: number;
  let launcher: HeraldProcess | undefined;
  let key: { id: number; token: string };

  /** Fresh ports for a run of the launcher on the test's data directory. */
  async function freshLauncherEnv(): Promise<NodeJS.ProcessEnv> {
    const { env, ports } = await launcherEnv(dataDir);
    baseUrl = `http://127.0.0.1:${ports.port}`;
    uiPort = ports.temporalUiPort;
    return env;
  }

  async function startLauncher(): Promise<HeraldProcess> {
    const proc = spawnHerald(['start'], env);
    launcher = proc;
    await untilRunning(proc);
    const health = await waitUntil(
      '/health to answer 200',
      async () => {
        const response = await httpGet(`${baseUrl}/health`);
        return response.status === 200 ? response : undefined;
      },
      { timeoutMs: 30_000, proc },
    );
    expect(health.body).toEqual({
      status: 'ok',
      checks: { postgres: 'up', temporal: 'up', worker: 'up' },
    });
    // What the leftover check looks for: the embedded servers name the data dir on their command line.
    const running = (await processesMentioning(dataDir)).map(({ cmdline }) => cmdline);
    expect(running).toContainEqual(expect.stringMatching(/postgres.* -D \S*\/postgres/));
    expect(running).toContainEqual(expect.stringMatching(/temporal.* start-dev /));
    // Bytes 18–19 of a SQLite file are 2 and 2 in write-ahead-log mode (1 and 1 otherwise).
    const header = Buffer.alloc(20);
    const file = await open(join(dataDir, 'temporal.db'));
    await file.read(header, 0, 20, 0).finally(() => file.close());
    expect([header[18], header[19]]).toEqual([2, 2]);
    return proc;
  }

  async function stopLauncherCleanly(): Promise<void> {
    const proc = launcher as HeraldProcess;
    const exit = await interrupt(proc, 60_000);
    expect(
      exit,
      `the launcher did not exit within 30 s of SIGINT:\n${proc.stderr()}`,
    ).toBeDefined();
    expect(exit?.code, proc.stderr()).toBe(0);
    // Postgres and the Temporal dev server run detached; none may outlive the launcher.
    expect(await leftoverProcesses(dataDir)).toEqual([]);
  }

  const getMessage = (token: string) =>
    httpGet(`${baseUrl}/api/v1/messages/999999`, { authorization: `Bearer ${token}` });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-launcher-'));
    env = await freshLauncherEnv();
  });

  afterAll(async () => {
    await ensureStopped(launcher);
    if (dataDir) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('starts with embedded Postgres and Temporal, and reports every check up', async () => {
    await startLauncher();
    const ui = await waitUntil(
      'the Temporal UI to answer',
      async () => {
        const response = await httpGet(`http://127.0.0.1:${uiPort}/`);
        return response.status === 200 ? response : undefined;
      },
      { timeoutMs: 30_000, proc: launcher },
    );
    expect(ui.status).toBe(200);
  });

  it('creates a workspace, a user and an API key from the CLI', async () => {
    const workspace = await runHeraldJson(['workspace', 'create', '--name', 'Acme'], env);
    expect(workspace.code, workspace.stderr).toBe(0);
    expect(workspace.json).toEqual({ id: expect.any(Number), slug: 'acme' });

    const user = await runHeraldJson(
      [
        'user',
        'create',
        '--workspace',
        'acme',
        '--email',
        'a@acme.test',
        '--password',
        'long enough pw',
      ],
      env,
    );
    expect(user.code, user.stderr).toBe(0);
    expect(user.json).toEqual({ id: expect.any(Number) });

    const created = await runHeraldJson(
      [
        'key',
        'create',
        '--workspace',
        'acme',
        '--user',
        'a@acme.test',
        '--abilities',
        'messages:read',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ id: expect.any(Number), token: expect.any(String) });
    expect(created.json.token).toMatch(/^hld_/);
    key = created.json as { id: number; token: string };
  });

  it('the key authenticates against the running api', async () => {
    const response = await getMessage(key.token);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'NOT-404' });
  });

  it('a revoked key is refused', async () => {
    const revoked = await runHeraldJson(['key', 'revoke', '--id', String(key.id)], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.json).toEqual({ id: key.id, revoked: true });

    const response = await getMessage(key.token);
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: 'Unauthenticated.' });
  });

  it('a bad invocation exits 2 with a JSON error naming the option', async () => {
    const result = await runHeraldJson(
      ['key', 'create', '--workspace', 'acme', '--abilities', 'nope'],
      env,
    );
    expect(result.code).toBe(2);
    expect(result.json).toEqual({
      error: { type: 'UsageError', message: expect.stringContaining('--abilities') },
    });
  });

  it('stops on SIGINT with exit code 0 and leaves no process behind', async () => {
    await stopLauncherCleanly();
  });

  it('starts again on the same data directory and keeps its data', async () => {
    env = await freshLauncherEnv();
    await startLauncher();
    const again = await runHeraldJson(
      ['workspace', 'create', '--name', 'Acme', '--slug', 'acme'],
      env,
    );
    expect(again.code).toBe(2);
    expect(again.json).toEqual({
      error: { type: 'UsageError', message: expect.stringContaining('already exists') },
    });
  });

  it('stops again on SIGINT with exit code 0 and leaves no process behind', async () => {
    await stopLauncherCleanly();
  });
});
