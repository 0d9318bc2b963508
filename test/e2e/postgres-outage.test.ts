import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../cli/embedded/postgres.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  killProcessesMentioning,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { createTenant, registerTestNamespace, type Tenant } from '../support/stack.js';

const OUTAGES = 3;
const OUTAGE_MS = 3_000;
const BETWEEN_OUTAGES_MS = 2_500;
const RECIPIENTS = 200;
/** Paced so that the campaign is still sending through every outage. */
const PROVIDER_MESSAGES_PER_SECOND = 15;
const PROBE_INTERVAL_MS = 200;
const ANSWER_WITHIN_MS = 5_000;

interface Probe {
  name: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  body: unknown;
  /** Sent while Postgres was stopped or starting. */
  duringOutage: boolean;
}

/**
 * `herald api` and `herald worker` as separate processes on a Postgres of this test's own, which
 * is stopped three times while a paced campaign runs and requests of every kind keep coming:
 * every request is answered within 5 s with 503 {message} and Retry-After when it needed
 * Postgres (or its usual answer when it did not), never a 500; both processes survive, and the
 * campaign reaches every recipient exactly once.
 */
describe('Postgres stopped repeatedly under load', { timeout: 180_000 }, () => {
  const namespace = `herald-pg-outage-${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  let postgres: EmbeddedPostgres;
  let sql: Sql;
  let simulator: RunningSimulator;
  let tenant: Tenant;
  let baseUrl: string;
  let api: HeraldProcess | undefined;
  let worker: HeraldProcess | undefined;

  const startPostgres = () => startEmbeddedPostgres({ dataDir, adoptRunning: true });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-pg-outage-'));
    postgres = await startPostgres();
    const migrations = createSql(postgres.url, { max: 1, unboundedStatements: true });
    await migrate(migrations);
    await migrations.end();
    sql = createSql(postgres.url, { max: 2 });

    // A namespace of its own: no worker on another database ever takes this test's campaign.
    await registerTestNamespace(namespace);

    const secret = inject('secret');
    tenant = await createTenant({ env: parseEnv({ LOG_LEVEL: 'silent' }), secret, sql });
    simulator = await startSimulator({ port: 0 });
    await fetch(`${simulator.url}/v1/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ latency_ms: 20, receipt: { outcome: 'none' } }),
    });
    await insertProvider(sql, {
      workspaceId: tenant.workspaceId,
      slug: 'carrier',
      name: 'Carrier',
      type: 'simulator',
      requiresSenderId: false,
      messagesPerSecond: PROVIDER_MESSAGES_PER_SECOND,
      settings: { base_url: simulator.url },
    });

    const [port] = (await freePorts(1)) as [number];
    baseUrl = `http://127.0.0.1:${port}`;
    const env = heraldEnv({
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: namespace,
      HERALD_SECRET: secret,
      HERALD_DATA_DIR: dataDir,
      PORT: String(port),
      MCP_ENABLED: 'true',
      // Its own database: the outbox dispatcher runs, and must ride the outages out too.
      WEBHOOK_DISPATCHER: 'true',
    });
    worker = spawnHerald(['worker'], env);
    api = spawnHerald(['api'], env);
    await Promise.all([untilRunning(worker, 90_000), untilRunning(api, 90_000)]);
  }, 150_000);

  afterAll(async () => {
    await Promise.all([ensureStopped(api), ensureStopped(worker)]);
    await sql?.end({ timeout: 1 });
    await simulator?.close();
    await postgres?.stop();
    if (dataDir) {
      await killProcessesMentioning(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  const bearer = () => ({ authorization: `Bearer ${tenant.token}` });

  async function campaign(id: number) {
    const response = await fetch(`${baseUrl}/api/v1/messages/${id}`, { headers: bearer() });
    if (response.status !== 200) return undefined;
    const { data } = (await response.json()) as {
      data: { message: { status: string; sent_count: number } };
    };
    return data.message;
  }

  /** The requests a probe round sends: each needs Postgres, except /health (which checks it). */
  function probeRequests(campaignId: number): [string, string, RequestInit][] {
    return [
      ['REST read', `/api/v1/messages/${campaignId}`, { headers: bearer() }],
      [
        'REST send (invalid)',
        '/api/v1/messages',
        {
          method: 'POST',
          headers: { ...bearer(), 'content-type': 'application/json' },
          body: JSON.stringify({ recipients: ['not a number'], message: 'Hi' }),
        },
      ],
      [
        'OAuth token',
        '/oauth/token',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&client_id=unknown&code=x&code_verifier=y',
        },
      ],
      [
        'MCP',
        '/mcp',
        {
          method: 'POST',
          headers: {
            authorization: 'Bearer mcp_at_unknown',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        },
      ],
      ['health', '/health', {}],
    ];
  }

  /** The recipients of every message the provider received. */
  async function inbox(): Promise<string[]> {
    const response = await fetch(`${simulator.url}/v1/inbox`);
    const { messages } = (await response.json()) as { messages: { to: string }[] };
    return messages.map((message) => message.to);
  }

  async function probe(
    name: string,
    path: string,
    init: RequestInit,
    duringOutage: boolean,
  ): Promise<Probe> {
    const started = Date.now();
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        ...init,
        signal: AbortSignal.timeout(ANSWER_WITHIN_MS + 5_000),
      });
      const text = await response.text();
      return {
        name,
        status: response.status,
        ms: Date.now() - started,
        retryAfter: response.headers.get('retry-after'),
        body: text ? JSON.parse(text) : null,
        duringOutage,
      };
    } catch (error) {
      const ms = Date.now() - started;
      return { name, status: 0, ms, retryAfter: null, body: String(error), duringOutage };
    }
  }

  it('answers every request within 5 s, never 500, and the campaign is delivered exactly once', async () => {
    const recipients = Array.from(
      { length: RECIPIENTS },
      (_, i) => `+6143${String(i).padStart(7, '0')}`,
    );
    const sent = await fetch(`${baseUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ recipients, message: 'Outage drill', provider_slug: 'carrier' }),
    });
    expect(sent.status).toBe(202);
    const campaignId = ((await sent.json()) as { data: { message: { id: number } } }).data.message
      .id;

    let outage = false;
    let probing = true;
    const probes: Probe[] = [];
    const prober = (async () => {
      while (probing) {
        const round = probeRequests(campaignId).map(([name, path, init]) =>
          probe(name, path, init, outage),
        );
        probes.push(...(await Promise.all(round)));
        await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
      }
    })();

    /** Messages at the provider when each outage began. */
    const receivedAtOutages: number[] = [];
    for (let round = 0; round < OUTAGES; round++) {
      await new Promise((resolve) => setTimeout(resolve, BETWEEN_OUTAGES_MS));
      receivedAtOutages.push((await inbox()).length);
      outage = true;
      await postgres.stop();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      postgres = await startPostgres();
      outage = false;
    }
    await new Promise((resolve) => setTimeout(resolve, BETWEEN_OUTAGES_MS));
    probing = false;
    await prober;

    // Both processes rode the outages out.
    expect(api?.exit()).toBeUndefined();
    expect(worker?.exit()).toBeUndefined();

    const failures = probes.filter((each) => {
      if (each.ms > ANSWER_WITHIN_MS) return true;
      if (each.name === 'health') return ![200, 503].includes(each.status);
      if (each.status === 503) {
        return (
          each.retryAfter === null ||
          JSON.stringify(each.body) !==
            JSON.stringify({ message: 'Service temporarily unavailable.' })
        );
      }
      // What each answers with Postgres up.
      const usual: Record<string, number> = {
        'REST read': 200,
        'REST send (invalid)': 422,
        'OAuth token': 401,
        MCP: 401,
      };
      return each.status !== usual[each.name];
    });
    expect(failures).toEqual([]);
    const duringOutages = probes.filter((each) => each.duringOutage && each.name !== 'health');
    // The outages were met: requests that needed Postgres were refused while it was away.
    expect(duringOutages.filter((each) => each.status === 503).length).toBeGreaterThan(OUTAGES * 4);
    expect(probes.filter((each) => each.status === 500)).toEqual([]);

    const done = await waitUntil(
      'the campaign to complete',
      async () => {
        const view = await campaign(campaignId);
        return view?.status === 'completed' ? view : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, proc: worker },
    );
    // The outages met the campaign in the middle of its sending.
    expect(receivedAtOutages.some((count) => count > 0 && count < RECIPIENTS)).toBe(true);
    expect(done).toMatchObject({ status: 'completed', sent_count: RECIPIENTS });
    expect((await inbox()).sort()).toEqual([...recipients].sort());
    expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
    expect(api?.exit()).toBeUndefined();
    expect(worker?.exit()).toBeUndefined();
  });
});
