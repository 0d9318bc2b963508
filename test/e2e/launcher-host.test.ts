import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  httpGet,
  interrupt,
  killProcessesMentioning,
  type LauncherPorts,
  launcherEnv,
  leftoverProcesses,
  runHeraldJson,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';

/**
 * `herald start` with HOST set: the api and the simulator both listen there, and the worker
 * reaches the simulator (the `own` provider) there, handing it the api's address for receipts.
 * IPv6 loopback, so the addresses need brackets in URLs and 127.0.0.1 reaches neither.
 */
describe('herald start with HOST=::1', { timeout: 150_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let ports: LauncherPorts;
  let launcher: HeraldProcess | undefined;
  const apiUrl = () => `http://[::1]:${ports.port}`;
  const simulatorUrl = () => `http://[::1]:${ports.simulatorPort}`;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-host-'));
    ({ env, ports } = await launcherEnv(dataDir, { HOST: '::1' }));
  });

  afterAll(async () => {
    await ensureStopped(launcher);
    if (dataDir) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('serves the api and the simulator on HOST', async () => {
    const proc = spawnHerald(['start'], env);
    launcher = proc;
    await untilRunning(proc);
    expect(proc.stderr()).toContain(`Simulator    ${simulatorUrl()}`);
    expect(proc.stderr()).toContain(`API          ${apiUrl()}`);
    const health = await waitUntil(
      '/health to answer 200',
      async () => {
        const response = await httpGet(`${apiUrl()}/health`);
        return response.status === 200 ? response : undefined;
      },
      { timeoutMs: 30_000, proc },
    );
    expect(health.body).toMatchObject({ status: 'ok' });
    expect((await httpGet(`${simulatorUrl()}/v1/inbox`)).status).toBe(200);
  });

  it('the worker sends through the simulator as the `own` provider', async () => {
    const workspace = await runHeraldJson(['workspace', 'create', '--name', 'Host'], env);
    expect(workspace.code, workspace.stderr).toBe(0);
    const key = await runHeraldJson(
      ['key', 'create', '--workspace', 'host', '--abilities', 'messages:send'],
      env,
    );
    expect(key.code, key.stderr).toBe(0);

    const to = '+61412000042';
    const sent = await fetch(`${apiUrl()}/api/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.json.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients: [to], message: 'Hello over ::1' }),
    });
    expect(sent.status, await sent.clone().text()).toBe(202);
    const inbox = await waitUntil(
      'the message in the simulator inbox',
      async () => {
        const response = await httpGet(`${simulatorUrl()}/v1/inbox?to=${encodeURIComponent(to)}`);
        const { messages } = response.body as { messages: { body: string }[] };
        return messages.length > 0 ? messages : undefined;
      },
      { timeoutMs: 30_000, proc: launcher },
    );
    expect(inbox.map((message) => message.body)).toEqual(['Hello over ::1']);
  });

  it('stops on SIGINT and leaves no process behind', async () => {
    const proc = launcher as HeraldProcess;
    const exit = await interrupt(proc, 60_000);
    expect(exit?.code, proc.stderr()).toBe(0);
    expect(await leftoverProcesses(dataDir)).toEqual([]);
  });
});
