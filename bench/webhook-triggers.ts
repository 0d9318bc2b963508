/**
 * `npm run bench:webhooks`: what the webhook outbox trigger on campaign_messages (0007) costs a
 * 1,000-row status update (queued → sent, as a settled chunk does), against the same update with
 * that trigger disabled. Postgres from DATABASE_URL or an embedded one. Prints JSON.
 *
 * Scenarios, interleaved round by round so drift hits them alike:
 *   without_trigger       the webhook trigger disabled (the reporting triggers of 0004 still run)
 *   no_endpoints          trigger on, no enabled endpoint anywhere (the common case)
 *   endpoint_elsewhere    trigger on, another workspace has an enabled endpoint
 *   subscribed            trigger on, this workspace subscribes to message.sent: 1,000 events
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../cli/embedded/postgres.js';
import { insertCampaign } from '../db/campaigns.js';
import { createSql } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { insertWorkspace } from '../db/workspaces.js';
import { median, round } from './support/measure.js';

const ROWS = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const dataDir = await mkdtemp(join(tmpdir(), 'herald-bench-webhooks-'));
const postgres = process.env.DATABASE_URL
  ? undefined
  : await startEmbeddedPostgres({ dataDir, adoptRunning: false, log });
const sql = createSql(process.env.DATABASE_URL ?? (postgres?.url as string), {
  max: 1,
  unboundedStatements: true,
});
try {
  await migrate(sql);
  const suffix = Date.now().toString(36);
  const workspace = await insertWorkspace(sql, { slug: `bench-a-${suffix}`, name: 'Bench A' });
  const other = await insertWorkspace(sql, { slug: `bench-b-${suffix}`, name: 'Bench B' });
  const { id: campaignId } = await insertCampaign(sql, {
    workspaceId: workspace.id,
    apiKeyId: null,
    reference: 'bench',
    purpose: 'transactional',
    body: 'Benchmark',
    senderId: null,
    routingType: 'direct',
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients: Array.from({ length: ROWS }, (_, i) => `+6141${String(i).padStart(7, '0')}`),
  });
  const endpoint = (workspaceId: number, events: string[]) => sql`
    insert into webhook_endpoints (workspace_id, url, events, secret)
    values (${workspaceId}, 'https://93.184.215.14/bench', ${events}::text[], '\\x00')`;

  const scenarios: Record<string, { setup: () => Promise<unknown>; times: number[] }> = {
    without_trigger: {
      setup: () => sql`alter table campaign_messages disable trigger campaign_messages_webhook`,
      times: [],
    },
    no_endpoints: { setup: async () => {}, times: [] },
    endpoint_elsewhere: {
      setup: () => endpoint(other.id, ['message.sent']),
      times: [],
    },
    subscribed: { setup: () => endpoint(workspace.id, ['message.sent']), times: [] },
  };

  async function reset() {
    await sql`alter table campaign_messages disable trigger user`;
    await sql`update campaign_messages set status = 'queued', provider_slug = null,
      provider_message_id = null, submitted_at = null where campaign_id = ${campaignId}`;
    await sql`alter table campaign_messages enable trigger user`;
    await sql`delete from webhook_endpoints where workspace_id in (${workspace.id}, ${other.id})`;
    await sql`delete from webhook_events where workspace_id = ${workspace.id}`;
    await sql`vacuum analyze campaign_messages`;
  }

  /** The settle of a 1,000-message chunk, as db/campaign-messages.ts settleMessages does it. */
  async function settle(): Promise<number> {
    const started = performance.now();
    await sql`
      update campaign_messages set status = 'sent', provider_slug = 'own',
        provider_message_id = 'bench-' || seq, submitted_at = now()
      where campaign_id = ${campaignId} and status = 'queued'`;
    return performance.now() - started;
  }

  for (let roundIndex = 0; roundIndex <= ROUNDS; roundIndex++) {
    for (const [name, scenario] of Object.entries(scenarios)) {
      await reset();
      await scenario.setup();
      const time = await settle();
      // Round 0 warms caches and plans up; it is not counted.
      if (roundIndex > 0) scenario.times.push(time);
      if (name === 'subscribed') {
        const [row] = await sql<{ count: number }[]>`
          select count(*)::int as count from webhook_events where workspace_id = ${workspace.id}`;
        if (row?.count !== ROWS) throw new Error(`expected ${ROWS} events, found ${row?.count}`);
      }
    }
    if (roundIndex % 10 === 0) log(`round ${roundIndex}/${ROUNDS}`);
  }
  await reset();

  const baseline = median(scenarios.without_trigger?.times ?? []);
  const results = Object.fromEntries(
    Object.entries(scenarios).map(([name, { times }]) => {
      const sorted = [...times].sort((a, b) => a - b);
      const middle = median(times);
      return [
        name,
        {
          median_ms: round(middle),
          p10_ms: round(sorted[Math.floor(sorted.length * 0.1)] ?? 0),
          p90_ms: round(sorted[Math.floor(sorted.length * 0.9)] ?? 0),
          overhead_ms: round(middle - baseline),
          overhead_percent: round(((middle - baseline) / baseline) * 100),
        },
      ];
    }),
  );
  const [version] = await sql<{ version: string }[]>`select version()`;
  process.stdout.write(
    `${JSON.stringify({ rows_per_update: ROWS, rounds: ROUNDS, postgres: version?.version, results }, null, 2)}\n`,
  );
} finally {
  await sql.end();
  await postgres?.stop();
  await rm(dataDir, { recursive: true, force: true });
}
