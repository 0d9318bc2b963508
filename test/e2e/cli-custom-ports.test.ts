import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idColumn } from '../support/cli-table.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  interrupt,
  killProcessesMentioning,
  type LauncherPorts,
  launcherEnv,
  runHerald,
  runHeraldJson,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { inbox, numbers } from '../support/send.js';

/**
 * A stack started on custom ports (`PORT=... TEMPORAL_DEV_PORT=... npm start`) and the commands
 * of a second terminal that repeats none of them: they find it through the stack file the
 * launcher writes in its data directory, and say what they need when no stack runs.
 */
describe('herald start on custom ports, and a second terminal', { timeout: 120_000 }, () => {
  let dataDir: string;
  let ports: LauncherPorts;
  let launcher: HeraldProcess | undefined;
  /** The second terminal: the same directory (HERALD_DATA_DIR), none of the ports. */
  let secondTerminal: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-ports-'));
    const started = await launcherEnv(dataDir, { MCP_ENABLED: 'true' });
    ports = started.ports;
    secondTerminal = heraldEnv({ HERALD_DATA_DIR: dataDir });
    launcher = spawnHerald(['start'], started.env);
    await untilRunning(launcher);
  });

  afterAll(async () => {
    await ensureStopped(launcher);
    if (dataDir) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it("prints the console's and MCP's addresses in its banner, and writes its stack file", async () => {
    const api = `http://127.0.0.1:${ports.port}`;
    const banner = (launcher as HeraldProcess).stderr();
    expect(banner).toContain(
      `Herald is running\n  API          ${api}  (health: ${api}/health)\n` +
        `  Console      ${api}/console\n  MCP          ${api}/mcp\n`,
    );
    expect(JSON.parse(await readFile(join(dataDir, 'stack.json'), 'utf8'))).toEqual({
      pid: (launcher as HeraldProcess).child.pid,
      publicUrl: api,
      temporalAddress: `127.0.0.1:${ports.temporalPort}`,
      temporalNamespace: 'default',
    });
  });

  it('lists workspaces as a table', async () => {
    const created = await runHeraldJson(['workspace', 'create', '--name', 'Acme'], secondTerminal);
    expect(created.code, created.stderr).toBe(0);
    const listed = await runHerald(['workspace', 'list'], secondTerminal);
    const createdAt = (
      (await runHeraldJson(['workspace', 'list'], secondTerminal)).json.workspaces as {
        created_at: string;
      }[]
    )[0]?.created_at;
    const id = idColumn(created.json.id);
    expect({ code: listed.code, stdout: listed.stdout, stderr: listed.stderr }).toEqual({
      code: 0,
      stdout:
        `${id('ID')}SLUG  NAME  API      CREATED (UTC)\n` +
        `${id(created.json.id)}acme  Acme  enabled  ${String(createdAt).slice(0, 19).replace('T', ' ')}\n`,
      stderr: '',
    });
  });

  it('dispatches `campaign create` on the running stack, which sends it', async () => {
    const [to] = numbers(1) as [string];
    const args = ['campaign', 'create', '--workspace', 'acme', '--name', 'Hello'];
    const created = await runHeraldJson(
      [...args, '--recipients', to, '--body', 'Hi'],
      secondTerminal,
    );
    expect({ code: created.code, json: created.json }, created.stderr).toEqual({
      code: 0,
      json: { id: expect.any(Number), status: 'queued' },
    });
    const delivered = await waitUntil(
      'the message in the stack simulator inbox',
      async () => {
        const messages = await inbox(`http://127.0.0.1:${ports.simulatorPort}`, to);
        return messages.length > 0 ? messages : undefined;
      },
      { timeoutMs: 20_000, proc: launcher },
    );
    expect(delivered.map((message) => message.body)).toEqual(['Hi']);
  });

  it('says what it needs and exits 1 when no stack runs', async () => {
    const exit = await interrupt(launcher as HeraldProcess, 60_000);
    expect(exit?.code).toBe(0);
    await expect(access(join(dataDir, 'stack.json'))).rejects.toThrow(/ENOENT/);
    // A closed port stands for "nothing on the default": Temporal's 7233 may be taken here.
    const [closed] = (await freePorts(1)) as [number];
    const args = ['campaign', 'create', '--workspace', 'acme', '--name', 'Later'];
    const [to] = numbers(1) as [string];
    const result = await runHerald([...args, '--recipients', to, '--body', 'Hi'], {
      ...secondTerminal,
      TEMPORAL_DEV_PORT: String(closed),
    });
    const id = /^Campaign (\d+) /.exec(result.stdout)?.[1];
    expect({ code: result.code, stdout: result.stdout }).toEqual({
      code: 1,
      stdout:
        `Campaign ${id} "Later" is saved in acme but not dispatched, so it stays paused. ` +
        `Temporal at 127.0.0.1:${closed} did not confirm its dispatch: no \`herald start\` is ` +
        `running on ${dataDir} (it would have written ${join(dataDir, 'stack.json')}). Run this ` +
        'command in the directory Herald was started in (or with its HERALD_DATA_DIR), or set ' +
        "TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE) to the Temporal its workers use. Herald's " +
        'workers dispatch it once they reach Temporal; to dispatch it yourself then, run:\n' +
        `  herald campaign resume --workspace acme --id ${id}\n`,
    });
  });
});
