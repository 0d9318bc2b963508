import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql } from '../../db/client.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { startPrometheus } from '../support/prometheus.js';
import { createTenant, registerTestNamespace, type Tenant } from '../support/stack.js';

/**
 * `/metrics` on METRICS_PORT (issue 26, item 1): a `herald start` process against the run's
 * Postgres and Temporal, in a namespace of its own, sends through its simulator and is scraped as
 * Prometheus would scrape it.
 */
describe('metrics', { timeout: 180_000 }, () => {
  const namespace = `herald-metrics-${randomBytes(4).toString('hex')}`;
  const sql = createSql(inject('databaseUrl'), { max: 2 });
  // Two recipients: a small campaign, sent by its first try. Eleven: through the chunk
  // activity, whose task metrics the dashboard reads.
  const small = ['+61491570156', '+61491570157'];
  const larger = Array.from({ length: 11 }, (_, index) => `+614915702${10 + index}`);
  const recipients = [...small, ...larger];
  const body = `Metrics check ${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  let herald: HeraldProcess | undefined;
  let apiUrl: string;
  let metricsUrl: string;
  let metricsPort: number;
  let tenant: Tenant;

  beforeAll(async () => {
    await registerTestNamespace(namespace);
    dataDir = await mkdtemp(join(tmpdir(), 'herald-metrics-'));
    const [port, simulatorPort, scrapePort] = (await freePorts(3)) as [number, number, number];
    metricsPort = scrapePort;
    apiUrl = `http://127.0.0.1:${port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const values = {
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: namespace,
      HERALD_SECRET: inject('secret'),
      HERALD_DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_URL: apiUrl,
      SIMULATOR_PORT: String(simulatorPort),
      METRICS_PORT: String(metricsPort),
    };
    herald = spawnHerald(['start'], heraldEnv(values));
    await untilRunning(herald, 90_000);
    const env = parseEnv(values as NodeJS.ProcessEnv);
    tenant = await createTenant({ env, secret: inject('secret'), sql });
  }, 120_000);

  afterAll(async () => {
    await ensureStopped(herald);
    await sql.end();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const scrape = async () => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return response.text();
  };
  /** The value of one sample, by its exact name and labels as exposed. */
  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('counts sends from the request to their receipts, with the Temporal worker’s own metrics beside', async () => {
    for (const campaign of [small, larger]) {
      const answer = await fetch(`${apiUrl}/api/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipients: campaign, message: body }),
      });
      expect(answer.status).toBe(202);
    }

    const text = await waitUntil(
      'every receipt counted',
      async () => {
        const current = await scrape();
        return sample(current, 'herald_receipts_total{status="delivered"}') === 13
          ? current
          : undefined;
      },
      { timeoutMs: 60_000, proc: herald },
    );
    expect(
      sample(
        text,
        'herald_http_request_duration_seconds_count{method="POST",route="/api/v1/messages",status="202"}',
      ),
    ).toBe(2);
    expect(
      sample(text, 'herald_sends_total{kind="campaign",provider="own",outcome="accepted"}'),
    ).toBe(13);
    // A receipt that overtakes its own submission's settle has no submission time yet, so no delay
    // is observed for it (db/campaign-messages.ts RecordedReceipt): under load, fewer than 13.
    const delays = sample(text, 'herald_receipt_delay_seconds_count{status="delivered"}');
    expect(delays).toBeGreaterThanOrEqual(0);
    expect(delays).toBeLessThanOrEqual(13);
    // Both runs started on this process's own worker. The small one's messages go at once, in a
    // first try beside its start; its run's first workflow task still tries it as a local activity
    // when a local slot is free within 100 ms (a busy machine leaves that to a chunk activity),
    // and finds it done. The larger one's always go as a chunk.
    expect(sample(text, 'herald_campaign_starts_total{eager="true"}')).toBe(2);
    expect(sample(text, 'herald_campaign_starts_total{eager="false"}')).toBeUndefined();
    expect(sample(text, 'herald_campaign_chunks_total{run="first_try"}')).toBe(1);
    const local = sample(text, 'herald_campaign_chunks_total{run="local"}') ?? 0;
    const viaActivity = sample(text, 'herald_campaign_chunks_total{run="activity"}') ?? 0;
    expect([local + viaActivity, viaActivity >= 1]).toEqual([2, true]);
    expect(
      sample(
        text,
        'herald_provider_call_duration_seconds_count{provider="own",outcome="accepted"}',
      ),
    ).toBe(13);
    // The whole database's backlog: other tests' campaigns share it.
    expect(sample(text, 'herald_campaign_backlog_messages')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'herald_campaign_backlog_oldest_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'herald_db_pool_connections_max')).toBe(10);
    expect(sample(text, 'herald_db_connections{state="idle"}')).toBeGreaterThan(0);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    // The Temporal SDK's worker metrics, passed through from its Runtime.
    expect(text).toMatch(/^temporal_num_pollers\{.*poller_type="workflow_task".*\} [1-9]/m);
    expect(text).toMatch(/^temporal_activity_schedule_to_start_latency_bucket\{/m);
    // Never a number, a body or a workspace: only bounded labels.
    for (const recipient of recipients) {
      expect(text).not.toContain(recipient);
      expect(text).not.toContain(recipient.slice(1));
    }
    expect(text).not.toContain(body);
    expect(text).not.toContain(tenant.slug);
  });

  it('labels a path no route serves as unmatched, never by the path asked for', async () => {
    const probe = `/no-such-${randomBytes(4).toString('hex')}`;
    expect((await fetch(`${apiUrl}${probe}`)).status).toBe(404);
    const text = await scrape();
    expect(
      sample(
        text,
        'herald_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}',
      ),
    ).toBe(1);
    expect(text).not.toContain(probe);
  });

  it('serves nothing but GET /metrics', async () => {
    const other = await fetch(metricsUrl.replace('/metrics', '/'));
    expect([other.status, await other.json()]).toEqual([
      404,
      { message: 'Not found: metrics are at GET /metrics.' },
    ]);
  });
  it('is scraped by a real Prometheus that evaluates every alert rule and answers every dashboard query', async () => {
    const prometheus = await startPrometheus([`127.0.0.1:${metricsPort}`]);
    try {
      const query = (expr: string) => prometheus.get('/api/v1/query', { query: expr });
      await waitUntil(
        'Prometheus to have scraped the send',
        async () => {
          const { data } = await query('sum(herald_sends_total{outcome="accepted"})');
          return Number(data.result[0]?.value[1]) === 13 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      const rules = await waitUntil(
        'every rule evaluated',
        async () => {
          const { data } = await prometheus.get('/api/v1/rules');
          const all = data.groups.flatMap((group: { rules: PrometheusRule[] }) => group.rules);
          return all.every((rule: PrometheusRule) => !rule.lastEvaluation.startsWith('0001'))
            ? (all as PrometheusRule[])
            : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(rules.map((rule) => [rule.name, rule.health, rule.lastError ?? ''])).toEqual(
        rules.map((rule) => [rule.name, 'ok', '']),
      );
      expect(rules).toHaveLength(10);

      // Every series a rule or a dashboard panel reads exists: a renamed metric fails here.
      const exposed = new Set<string>((await prometheus.get('/api/v1/label/__name__/values')).data);
      const expressions = [...rules.map((rule) => rule.query), ...dashboardExpressions()];
      const named = new Set(
        expressions.flatMap((expr) => expr.match(/\b(herald|temporal|process|nodejs)_\w+/g) ?? []),
      );
      expect([...named].filter((name) => !exposed.has(name))).toEqual([]);
      for (const expr of dashboardExpressions()) expect((await query(expr)).status).toBe('success');

      // Sends by outcome as a dashboard reads them: a rate needs two scrapes of the counter.
      const accepted = await waitUntil(
        'a rate of accepted sends',
        async () => {
          const { data } = await query('sum by (outcome) (increase(herald_sends_total[5m]))');
          return data.result.find(
            (row: { metric: { outcome: string } }) => row.metric.outcome === 'accepted',
          );
        },
        { timeoutMs: 15_000 },
      );
      expect(accepted.metric).toEqual({ outcome: 'accepted' });
      // Prometheus reads the histogram as the process exposes it. Not a fixed count: the worker's
      // receipt reconciliation also settles overdue messages of other tests in the shared database.
      await waitUntil(
        'Prometheus to read the receipt delays the process exposes',
        async () => {
          const exposed = (await scrape())
            .split('\n')
            .filter((line) => line.startsWith('herald_receipt_delay_seconds_count{'))
            .reduce((total, line) => total + Number(line.split(' ').at(-1)), 0);
          const delay = await query('sum(herald_receipt_delay_seconds_count)');
          const read = Number(delay.data.result[0]?.value[1]);
          return read === exposed ? true : undefined;
        },
        { timeoutMs: 15_000 },
      );
    } finally {
      await prometheus.stop();
    }
  });
});

interface PrometheusRule {
  name: string;
  query: string;
  health: string;
  lastError?: string;
  lastEvaluation: string;
}

/** The Grafana dashboard's queries, with Grafana's rate interval made a plain one. */
function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(
    readFileSync(new URL('../../deploy/grafana/herald-dashboard.json', import.meta.url), 'utf8'),
  ) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) =>
    panel.targets.map((target) => target.expr.replaceAll('$__rate_interval', '1m')),
  );
}
