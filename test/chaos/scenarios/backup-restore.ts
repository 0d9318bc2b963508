import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { Cluster } from '../../../cli/cluster/cluster.js';
import { TEMPORAL_SERVICES } from '../../../cli/cluster/temporal-config.js';
import { freePort } from '../../../cli/embedded/ports.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../../cli/embedded/postgres.js';
import { Lifecycle } from '../../../cli/lifecycle.js';
import { heraldEnv, runHeraldJson } from '../../support/processes.js';
import { createTenant, type Tenant } from '../support/api.js';
import {
  auditCampaigns,
  clearInbox,
  type InboxMessage,
  readInbox,
  setBehaviour,
} from '../support/audit.js';
import { takeBaseBackup } from '../support/base-backup.js';
import {
  apiCounters,
  exactlyOnceChecks,
  type SentCampaign,
  sendCampaign,
  untilAllCompleted,
} from '../support/campaign.js';
import { check, type Scenario } from '../support/scenario.js';
import { auditLogs, type LogText, rememberSecret } from '../support/secrets.js';
import type { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep, waitUntil } from '../support/timing.js';

/** Slow enough that every campaign is still sending when the backup is taken. */
const MESSAGES_PER_SECOND = 40;
const PROVIDER_LATENCY_MS = 100;
const CAMPAIGNS = 4;
const RECIPIENTS = 250;
/** How long the original site runs on after the backup before it is lost. */
const RUN_ON_AFTER_BACKUP_MS = 4_000;

/**
 * A part of the production topology (cli/cluster: Temporal's services on Postgres, one Postgres
 * server holding Herald's and Temporal's databases), as the chaos helpers use a stack.
 */
class Site {
  readonly lifecycle = new Lifecycle((line) => log(`[site] ${line}`));
  cluster!: Cluster;
  postgres!: EmbeddedPostgres;

  /** `providerSimulator`: the simulator the tenant's provider points at, if not this site's own. */
  constructor(
    readonly dataDir: string,
    readonly secret: string,
    private readonly providerSimulator?: string,
  ) {}

  get apiUrls() {
    return this.cluster.apiUrls;
  }

  /** The outside world: the first site's simulator, which outlives the site. */
  get simulatorUrl(): string {
    return this.providerSimulator ?? this.cluster.simulatorUrl;
  }

  async startPostgres() {
    this.postgres = await startEmbeddedPostgres({
      dataDir: this.dataDir,
      adoptRunning: false,
      registerStop: (stop) => this.lifecycle.add('Postgres', stop),
    });
    rememberSecret('database password', decodeURIComponent(new URL(this.postgres.url).password));
  }

  async startCluster(temporalPort: number) {
    this.cluster = await Cluster.start({
      dataDir: this.dataDir,
      databaseUrl: this.postgres.url,
      secret: this.secret,
      namespace: 'default',
      apiPorts: [await freePort()],
      workers: 1,
      simulatorPort: await freePort(),
      temporalPort,
      heraldEnv: heraldEnv({ HERALD_DATA_DIR: this.dataDir, LOG_LEVEL: 'info' }),
      log: (line) => log(`[cluster] ${line}`),
      register: (name, stop) => this.lifecycle.add(name, stop),
    });
  }

  /** The admin commands' environment: the database and secret are all they use. */
  env() {
    return heraldEnv({
      HERALD_DATA_DIR: this.dataDir,
      DATABASE_URL: this.postgres.url,
      HERALD_SECRET: this.secret,
      OWN_PROVIDER_URL: this.simulatorUrl,
    });
  }

  async admin(args: string[]): Promise<Record<string, unknown>> {
    const result = await runHeraldJson(args, this.env());
    if (result.code !== 0)
      throw new Error(`herald ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    if (typeof result.json.token === 'string') rememberSecret('api key', result.json.token);
    return result.json;
  }

  async withSql<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(this.postgres.url, { max: 2, onnotice: () => {}, connect_timeout: 10 });
    try {
      return await fn(sql);
    } finally {
      await sql.end({ timeout: 2 });
    }
  }

  asStack(): ChaosStack {
    return this as unknown as ChaosStack;
  }

  /** The site is lost: `kill -9` of Herald and Temporal, Postgres's immediate stop (a crash). */
  async lose() {
    await this.cluster.kill('api-0');
    await this.cluster.kill('worker-0');
    for (const service of TEMPORAL_SERVICES) await this.cluster.temporal.kill(service);
    const pidFile = join(this.postgres.clusterDir, 'postmaster.pid');
    const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGQUIT');
  }

  async logs(): Promise<LogText[]> {
    const dir = join(this.dataDir, 'logs');
    const files = await readdir(dir).catch(() => []);
    const logs = await Promise.all(
      files.map(async (file) => ({
        name: `${this.dataDir}/${file}`,
        text: await readFile(join(dir, file), 'utf8'),
      })),
    );
    const server = await readFile(join(this.postgres.clusterDir, 'server.log'), 'utf8');
    return [...logs, { name: `${this.dataDir}/postgres`, text: server }];
  }
}

const inboxOf = (inbox: InboxMessage[], bodies: Set<string>) =>
  inbox.filter((message) => bodies.has(message.body));

/**
 * The backup drill (docs/operations.md "Backups and restore"), on the production topology: Temporal's
 * services on Postgres, one Postgres server holding Herald's and Temporal's databases. Four
 * campaigns of 250 are sending when a base backup of that server is taken; the site runs on for
 * 4 s and is then lost (kill -9 of everything, Postgres crashed). The backup is restored on a
 * fresh stack (its own Postgres, Temporal processes, api and worker; the simulator, the
 * outside world, is the same), `herald restore reconcile` is run, and the campaigns are
 * counted at the simulator's inbox across both runs: nobody may receive a message twice, and
 * whoever received nothing is reported with the reason Herald recorded.
 */
export const backupRestore: Scenario = {
  name: 'backup-restore',
  short: false,
  drill: true,
  async run(options) {
    const secret = randomBytes(32).toString('base64url');
    rememberSecret('HERALD_SECRET', secret);
    const original = new Site(await mkdtemp(join(tmpdir(), 'herald-backup-')), secret);
    const restoredDir = await mkdtemp(join(tmpdir(), 'herald-restored-'));
    let restored: Site | undefined;
    try {
      await original.startPostgres();
      const temporalPort = await freePort();
      await original.startCluster(temporalPort);
      const simulatorUrl = original.simulatorUrl;
      await clearInbox(simulatorUrl);
      await setBehaviour(simulatorUrl, { latency_ms: PROVIDER_LATENCY_MS });
      const tenant: Tenant = await createTenant(original.asStack(), {
        name: 'Backup drill',
        providers: [{ slug: 'paced', messagesPerSecond: MESSAGES_PER_SECOND }],
      });
      const campaigns: SentCampaign[] = [];
      for (let i = 0; i < CAMPAIGNS; i++)
        campaigns.push(
          await sendCampaign(original.asStack(), tenant, {
            label: `backup-${i}`,
            prefix: `+6141${i}`,
            count: RECIPIENTS,
            provider: 'paced',
          }),
        );
      const bodies = new Set(campaigns.map((campaign) => campaign.body));
      const total = CAMPAIGNS * RECIPIENTS;
      const arrived = async () => inboxOf(await readInbox(simulatorUrl), bodies).length;
      await waitUntil(
        'a tenth of the messages at the inbox',
        async () => ((await arrived()) >= total / 10 ? true : undefined),
        120_000,
        200,
      );

      const backupStarted = Date.now();
      const deliveredBeforeBackup = await arrived();
      const backup = await takeBaseBackup(
        original.postgres.url,
        original.postgres.clusterDir,
        join(restoredDir, 'postgres'),
      );
      const backupSeconds = seconds(Date.now() - backupStarted);
      const deliveredAtBackupEnd = await arrived();
      log(
        `base backup in ${backupSeconds} s (${deliveredBeforeBackup}–${deliveredAtBackupEnd} delivered)`,
      );
      await sleep(RUN_ON_AFTER_BACKUP_MS);
      await original.lose();
      await sleep(500);
      const inboxAtLoss = inboxOf(await readInbox(simulatorUrl), bodies);
      log(`site lost with ${inboxAtLoss.length} of ${total} delivered`);

      // --- Restore: the backup on a fresh stack -------------------------------------------------
      const restoreStarted = Date.now();
      await copyFile(join(original.dataDir, 'postgres.json'), join(restoredDir, 'postgres.json'));
      restored = new Site(restoredDir, secret, simulatorUrl);
      await restored.startPostgres();
      const postgresRecoveredSeconds = seconds(Date.now() - restoreStarted);
      const atBackup = await restored.withSql(async (sql) => {
        const inFlight = await sql<{ id: number; queued: number; marked: number }[]>`
          select c.id::int as id,
            count(*) filter (where m.status = 'queued')::int as queued,
            count(*) filter (where m.status = 'queued' and m.attempt_provider is not null)::int as marked
          from campaigns c join campaign_messages m on m.campaign_id = c.id
          where c.workspace_id = ${tenant.workspaceId} and c.status <> 'completed'
          group by c.id`;
        const unmarked = await sql<{ recipient: string; body: string }[]>`
          select m.recipient, c.body from campaign_messages m join campaigns c on c.id = m.campaign_id
          where c.workspace_id = ${tenant.workspaceId} and m.status = 'queued'
            and m.attempt_provider is null`;
        return { inFlight, unmarked };
      });
      const deliveredPairs = new Set(
        inboxAtLoss.map((message) => `${message.to}\n${message.body}`),
      );
      const wouldRepeat = atBackup.unmarked.filter((row) =>
        deliveredPairs.has(`${row.recipient}\n${row.body}`),
      ).length;
      const reconciled = await restored.admin(['restore', 'reconcile']);
      await restored.startCluster(temporalPort);
      const restoreSeconds = seconds(Date.now() - restoreStarted);
      log(`restored and serving in ${restoreSeconds} s; ${JSON.stringify(reconciled)}`);

      const completed = await untilAllCompleted(
        restored.asStack(),
        campaigns.map((campaign) => campaign.id),
        240_000,
      );
      const resumedSeconds = seconds(Date.now() - restoreStarted);
      await sleep(1_000);
      const inbox = inboxOf(await readInbox(simulatorUrl), bodies);
      const audit = await auditCampaigns(restored.asStack(), tenant.workspaceId, inbox);
      const restoredStack = restored.asStack();
      const counters = await Promise.all(
        campaigns.map((campaign) => apiCounters(restoredStack, tenant, campaign)),
      );
      const neverReceived = audit.total - new Set(inbox.map((m) => `${m.to}\n${m.body}`)).size;
      const figures = {
        topology: 'cluster: Temporal services on Postgres; one Postgres server, 3 databases',
        backup: 'base backup (pg_backup_start, copy, pg_backup_stop, WAL)',
        backup_seconds: backupSeconds,
        backup_stop_lsn: backup.stopLsn,
        campaigns: CAMPAIGNS,
        messages: total,
        campaigns_in_flight_at_backup: atBackup.inFlight.length,
        queued_at_backup: atBackup.inFlight.reduce((n, c) => n + c.queued, 0),
        marked_in_flight_at_backup: atBackup.inFlight.reduce((n, c) => n + c.marked, 0),
        delivered_before_backup: deliveredBeforeBackup,
        delivered_at_backup_end: deliveredAtBackupEnd,
        delivered_before_loss: inboxAtLoss.length,
        // What the restored databases cannot know: sent after the copy's WAL ends.
        delivered_after_backup_end_before_loss: inboxAtLoss.length - deliveredAtBackupEnd,
        would_repeat_without_reconcile: wouldRepeat,
        reconciled,
        restore_postgres_recovered_seconds: postgresRecoveredSeconds,
        restore_seconds: restoreSeconds,
        completed_seconds_after_restore_began: completed ? resumedSeconds : null,
        delivered_after_restore: inbox.length - inboxAtLoss.length,
        delivered_total: inbox.length,
        duplicates: audit.duplicated,
        duplicate_examples: audit.examples.duplicated,
        lost: neverReceived,
        lost_reasons: audit.failed_errors,
        audit,
      };
      return {
        figures,
        checks: [
          check(
            'campaigns in flight at backup',
            atBackup.inFlight.length,
            atBackup.inFlight.length >= CAMPAIGNS / 2,
            `at least ${CAMPAIGNS / 2} of ${CAMPAIGNS} still sending`,
          ),
          check(
            'sent after the backup, before the loss',
            figures.delivered_after_backup_end_before_loss,
            figures.delivered_after_backup_end_before_loss > 0,
            'some (what the restored database cannot know)',
          ),
          check('completed after restore', completed, completed, 'every campaign completed'),
          check(
            'lost',
            neverReceived,
            neverReceived === 0,
            '0 recipients never received their message',
          ),
          ...exactlyOnceChecks(audit, counters),
        ],
      };
    } finally {
      for (const site of [restored, original]) {
        if (!site) continue;
        await site.lifecycle.shutdown();
        if (site.postgres) auditLogs(await site.logs().catch(() => []));
        if (!options.keep) await rm(site.dataDir, { recursive: true, force: true });
      }
      if (!restored) await rm(restoredDir, { recursive: true, force: true });
    }
  },
};
