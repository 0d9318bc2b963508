import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  httpGet,
  killProcessesMentioning,
  type LauncherPorts,
  launcherEnv,
  runHeraldJson,
  spawnHerald,
  untilRunning,
} from '../support/processes.js';

/** Every base64 payload of a history decoded, so a plaintext search sees inside them. */
function readableHistory(historyJson: string): string {
  const decoded = [...historyJson.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map(([, data]) =>
    Buffer.from(data as string, 'base64').toString('utf8'),
  );
  return [historyJson, ...decoded].join('\n');
}

/** The code as a number of its own, not a run of digits inside a timestamp or an id. */
const mentions = (text: string, code: string) => new RegExp(`(?<!\\d)${code}(?!\\d)`).test(text);

/**
 * `herald start` at LOG_LEVEL=trace sends an eight-digit code: afterwards nothing Herald keeps
 * (its logs, Temporal's history of the run, any row of any table) contains it.
 */
describe('an OTP code leaves no trace', { timeout: 180_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let ports: LauncherPorts;
  let launcher: HeraldProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-secrecy-'));
    ({ env, ports } = await launcherEnv(dataDir, { LOG_LEVEL: 'trace' }));
  });

  afterAll(async () => {
    await ensureStopped(launcher);
    if (dataDir) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('is in the SMS and nowhere in logs, history or tables', async () => {
    const proc = spawnHerald(['start'], env);
    launcher = proc;
    await untilRunning(proc);
    const workspace = await runHeraldJson(['workspace', 'create', '--name', 'Quiet'], env);
    expect(workspace.code, workspace.stderr).toBe(0);
    const credits = await runHeraldJson(
      ['credits', 'add', '--workspace', 'quiet', '--amount', '5'],
      env,
    );
    expect(credits.json).toEqual({ balance: 5 });
    const key = await runHeraldJson(
      ['key', 'create', '--workspace', 'quiet', '--abilities', 'otp:send,otp:verify'],
      env,
    );
    const api = `http://127.0.0.1:${ports.port}`;
    const headers = {
      authorization: `Bearer ${key.json.token}`,
      'content-type': 'application/json',
    };
    const recipient = '+61412000077';
    const sent = await fetch(`${api}/api/v1/otp/send`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'secrecy-1' },
      body: JSON.stringify({ recipient, purpose: 'login', code_length: 8 }),
    });
    const { data } = (await sent.json()) as { data: { request_id: string; status: string } };
    expect(data.status).toBe('accepted');
    const inbox = await httpGet(
      `http://127.0.0.1:${ports.simulatorPort}/v1/inbox?to=${encodeURIComponent(recipient)}`,
    );
    const [message] = (inbox.body as { messages: { body: string }[] }).messages;
    const code = /\d{8}/.exec(message?.body ?? '')?.[0] as string;
    expect(code).toMatch(/^\d{8}$/);
    const verified = await fetch(`${api}/api/v1/otp/verify`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ recipient, code, request_id: data.request_id }),
    });
    expect(verified.status).toBe(200);

    expect(mentions(proc.stdout() + proc.stderr(), code)).toBe(false);
    // Trace logging is on: the requests themselves are in the log.
    expect(proc.stdout() + proc.stderr()).toContain('/api/v1/otp/verify');

    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporalPort}` });
    try {
      const client = new Client({ connection });
      const history = await client.workflow
        .getHandle(`otp/${workspace.json.id}/${data.request_id}`)
        .fetchHistory();
      const text = readableHistory(JSON.stringify(history));
      expect(text).toContain(data.request_id);
      expect(mentions(text, code)).toBe(false);
    } finally {
      await connection.close();
    }

    const state = JSON.parse(await readFile(join(dataDir, 'postgres.json'), 'utf8'));
    const sql = postgres({
      host: '127.0.0.1',
      port: state.port,
      user: state.user,
      password: state.password,
      database: 'herald',
      onnotice: () => {},
    });
    try {
      const tables = await sql<{ name: string }[]>`
        select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE'`;
      expect(tables.map((table) => table.name)).toContain('otp_requests');
      for (const { name } of tables) {
        const rows = await sql`select row_to_json(t)::text as row from ${sql(name)} t`;
        const dump = rows.map((row) => row.row as string).join('\n');
        expect(mentions(dump, code), `table ${name}`).toBe(false);
      }
    } finally {
      await sql.end();
    }
  });
});
