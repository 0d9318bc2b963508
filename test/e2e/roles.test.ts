import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSql } from '../../db/client.js';
import { MAINTENANCE_SCHEDULE_ID } from '../../workflows/definitions.js';
import type { MaintenanceResult } from '../../workflows/maintenance.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  httpGet,
  interrupt,
  runHerald,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';

/**
 * The production shape: `herald api` and `herald worker` as separate processes against configured
 * Postgres and Temporal (the test stack's), in a namespace where no other worker polls.
 */
describe('herald api and herald worker as separate processes', { timeout: 120_000 }, () => {
  const namespace = inject('isolatedNamespace');
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  let api: HeraldProcess | undefined;
  let worker: HeraldProcess | undefined;
  let connection: Connection | undefined;

  const health = () => httpGet(`${baseUrl}/health`);
  const sql = createSql(inject('databaseUrl'), { max: 1 });

  /** Registrations 31 days old (one with a revoked connection) and one from today. */
  async function seedOAuthRegistrations() {
    const suffix = Date.now().toString(36);
    const clients = {
      abandoned: `mcp_roles_abandoned_${suffix}`,
      oldButConnected: `mcp_roles_connected_${suffix}`,
      fresh: `mcp_roles_fresh_${suffix}`,
    };
    for (const [id, age] of [
      [clients.abandoned, '31 days'],
      [clients.oldButConnected, '31 days'],
      [clients.fresh, '1 day'],
    ] as const) {
      await sql`
        insert into oauth_clients (id, name, redirect_uris, token_endpoint_auth_method, created_at)
        values (${id}, 'roles test', ${['http://127.0.0.1/callback']}, 'none',
                now() - ${age}::interval)`;
    }
    const [workspace] = await sql<{ id: number }[]>`
      insert into workspaces (slug, name) values (${`roles-${suffix}`}, 'Roles') returning id`;
    const [user] = await sql<{ id: number }[]>`
      insert into users (email, password_hash) values (${`roles-${suffix}@example.com`}, 'x')
      returning id`;
    await sql`
      insert into oauth_connections (workspace_id, user_id, client_id, scope, revoked_at)
      values (${workspace?.id ?? 0}, ${user?.id ?? 0}, ${clients.oldButConnected}, 'mcp:use', now())`;
    return clients;
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-roles-'));
    const [port] = (await freePorts(1)) as [number];
    baseUrl = `http://127.0.0.1:${port}`;
    env = heraldEnv({
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: namespace,
      HERALD_SECRET: inject('secret'),
      HERALD_DATA_DIR: dataDir,
      PORT: String(port),
    });
  });

  afterAll(async () => {
    await Promise.all([ensureStopped(api), ensureStopped(worker)]);
    await connection?.close();
    await sql.end();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 90_000);

  it('herald api refuses a PORT that is not a port', async () => {
    const result = await runHerald(['api'], { ...env, PORT: 'notaport' });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain('PORT');
  });

  it('herald worker refuses to run without DATABASE_URL and TEMPORAL_ADDRESS', async () => {
    const result = await runHerald(
      ['worker'],
      heraldEnv({ HERALD_DATA_DIR: dataDir, HERALD_SECRET: inject('secret') }),
    );
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain('DATABASE_URL');
  });

  it('the api alone reports the worker down', async () => {
    const proc = spawnHerald(['api'], env);
    api = proc;
    const response = await waitUntil(
      '/health to answer',
      async () => {
        const response = await health();
        return response.status === 503 ? response : undefined;
      },
      { timeoutMs: 60_000, proc },
    );
    expect(response.body).toMatchObject({
      status: 'unavailable',
      checks: { postgres: 'up', temporal: 'up', worker: 'down' },
    });
  });

  it('with the worker running, /health turns 200', async () => {
    const proc = spawnHerald(['worker'], env);
    worker = proc;
    await untilRunning(proc, 90_000);
    const response = await waitUntil(
      '/health to answer 200',
      async () => {
        const response = await health();
        return response.status === 200 ? response : undefined;
      },
      { timeoutMs: 30_000, proc: api },
    );
    expect(response.body).toEqual({
      status: 'ok',
      checks: { postgres: 'up', temporal: 'up', worker: 'up' },
    });
  });

  it('the worker runs the maintenance schedule it created', async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new Client({ connection, namespace });
    const schedule = await client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID).describe();
    expect(schedule.action).toMatchObject({ workflowType: 'maintenanceWorkflow' });
    const nextRun = schedule.info.nextActionTimes[0]?.getTime() ?? 0;
    expect(nextRun - Date.now()).toBeGreaterThan(0);
    expect(nextRun - Date.now()).toBeLessThanOrEqual(86_400_000);
    const clients = await seedOAuthRegistrations();
    const triggeredAt = Date.now();
    await client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID).trigger();

    const run = await waitUntil<WorkflowExecutionInfo>(
      'a completed maintenanceWorkflow',
      async () => {
        for await (const execution of client.workflow.list({
          query: "WorkflowType='maintenanceWorkflow'",
        })) {
          const recent = execution.startTime.getTime() >= triggeredAt - 5_000;
          if (recent && execution.status.name === 'COMPLETED') return execution;
        }
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, proc: worker },
    );
    const result = (await client.workflow
      .getHandle(run.workflowId, run.runId)
      .result()) as MaintenanceResult;
    expect(result).toEqual({
      orphanCampaignsClosed: expect.any(Number),
      idempotencyKeysPurged: expect.any(Number),
      unsentOtpRequestsFailed: expect.any(Number),
      abandonedOAuthClientsDeleted: expect.any(Number),
      webhookEventsDeleted: expect.any(Number),
      idleSendSlotsDeleted: expect.any(Number),
      staleSubmissionLeasesDeleted: expect.any(Number),
      expiredOAuthRecordsPurged: expect.any(Number),
      personalDataDropped: expect.any(Number),
    });
    expect(result.abandonedOAuthClientsDeleted).toBeGreaterThanOrEqual(1);
    const remaining = await sql<{ id: string }[]>`
      select id from oauth_clients where id = any(${Object.values(clients)}) order by id`;
    expect(remaining.map((row) => row.id)).toEqual([clients.fresh, clients.oldButConnected].sort());
  });

  it('both stop on SIGINT with exit code 0, the api even with a request held open', async () => {
    // A client that sent headers and part of a body, then went quiet: the request stays in flight.
    const held = connect(Number(new URL(baseUrl).port), '127.0.0.1');
    await new Promise<void>((resolve) => held.once('connect', resolve));
    held.write(
      'POST /api/v1/messages HTTP/1.1\r\nHost: herald\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"recipients"',
    );
    held.on('error', () => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [apiExit, workerExit] = await Promise.all([
      interrupt(api as HeraldProcess, 30_000),
      interrupt(worker as HeraldProcess, 30_000),
    ]);
    expect(apiExit?.code, api?.stderr()).toBe(0);
    expect(api?.stderr()).toContain(
      'The api still had requests in flight after 10 s; closing them.',
    );
    expect(workerExit?.code, worker?.stderr()).toBe(0);
    held.destroy();
  });
});
