/**
 * An audit line is written in its change's transaction: a process killed between the change and
 * its line leaves both or neither. `herald key revoke` runs as a real process against a database
 * of its own, whose audit_log the test locks: the process is SIGKILLed while its line waits for
 * the lock, after the key's revocation was written. The revocation must be gone with it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiKey } from '../../commands/team/api-keys.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { createSql, type Sql } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { heraldEnv, runHeraldJson, spawnHerald } from '../support/processes.js';

const DATABASE = `audit_atomicity_${randomBytes(4).toString('hex')}`;
let admin: Sql;
let sql: Sql;
let databaseUrl: string;

beforeAll(async () => {
  admin = createSql(inject('databaseUrl'), { max: 1 });
  await admin.unsafe(`create database ${DATABASE}`);
  // A backend waiting for a lock notices at once that its client died, and rolls back.
  await admin.unsafe(`alter database ${DATABASE} set client_connection_check_interval = '50ms'`);
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${DATABASE}`;
  databaseUrl = url.toString();
  sql = createSql(databaseUrl, { max: 4, unboundedStatements: true });
  await migrate(sql);
}, 120_000);

afterAll(async () => {
  await sql?.end();
  await admin?.unsafe(`drop database if exists ${DATABASE} with (force)`);
  await admin?.end();
});

const cliEnv = () => heraldEnv({ DATABASE_URL: databaseUrl, HERALD_SECRET: inject('secret') });

async function keyToRevoke() {
  const deps = { sql, secret: inject('secret') };
  const slug = `a-${randomBytes(5).toString('hex')}`;
  const workspace = await createWorkspace(deps, { name: 'Atomic', slug }, TEST_OPERATOR);
  const key = await createApiKey(
    deps,
    { workspace: slug, abilities: ['messages:read'] },
    TEST_OPERATOR,
  );
  return { workspaceId: workspace.id, keyId: key.id, prefix: key.prefix };
}

/** The key's revocation and its audit line, as committed. */
async function stateOf(keyId: number, prefix: string) {
  const [key] = await sql<{ revoked: boolean }[]>`
    select revoked_at is not null as revoked from api_keys where id = ${keyId}`;
  const lines = await sql<{ source: string }[]>`
    select source from audit_log where action = 'api_key.revoked' and target = ${`API key ${prefix}`}`;
  return { revoked: key?.revoked, lines: lines.map((line) => line.source) };
}

/** The backend of another session waiting for a lock to insert into audit_log, if any. */
async function waitingAuditInsert(): Promise<number | undefined> {
  const [row] = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid()
      and wait_event_type = 'Lock' and query ilike '%insert into audit_log%'`;
  return row?.pid;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, describe: () => string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what} never happened: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('audit lines in the change’s transaction', () => {
  it('a process killed between the change and its line leaves neither', async () => {
    const { keyId, prefix } = await keyToRevoke();
    await sql.begin(async (locker) => {
      // Held however long the process takes to start; reads go on, inserts into audit_log wait.
      await locker`set local idle_in_transaction_session_timeout = 0`;
      await locker`lock table audit_log in exclusive mode`;
      const revoke = spawnHerald(['key', 'revoke', '--id', String(keyId), '--json'], cliEnv());
      const describeRun = () =>
        `exit ${JSON.stringify(revoke.exit())}\n${revoke.stdout()}\n${revoke.stderr()}`;
      const pid = await until(
        'the audit insert waiting for the lock',
        async () => (revoke.exit() ? -1 : await waitingAuditInsert()),
        describeRun,
      );
      expect(pid, describeRun()).toBeGreaterThan(0);
      revoke.child.kill('SIGKILL');
      expect(await revoke.exited).toEqual({ code: null, signal: 'SIGKILL' });
      // Its session ends, committing nothing more; then the lock goes with this transaction.
      await until(
        'the killed process’s session ending',
        async () =>
          (await sql`select 1 from pg_stat_activity where pid = ${pid}`).length === 0
            ? true
            : undefined,
        describeRun,
      );
    });
    expect(await stateOf(keyId, prefix)).toEqual({ revoked: false, lines: [] });
  });

  it('a process that finishes leaves both', async () => {
    const { keyId, prefix } = await keyToRevoke();
    const run = await runHeraldJson(['key', 'revoke', '--id', String(keyId)], cliEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toEqual({ id: keyId, revoked: true });
    expect(await stateOf(keyId, prefix)).toEqual({ revoked: true, lines: ['cli'] });
  });
});
