import { campaignView, createTenant, recipients, type Tenant } from '../support/api.js';
import { auditCampaigns, clearInbox, readInbox } from '../support/audit.js';
import {
  apiCounters,
  exactlyOnceChecks,
  type SentCampaign,
  sendCampaign,
  untilAllCompleted,
} from '../support/campaign.js';
import { arrivalsOf, notExactlyOnce } from '../support/lifecycle.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep } from '../support/timing.js';

const APIS = 2;
const WORKERS = 2;
/** The "scheduled 2 minutes ahead". */
const AHEAD_MS = 120_000;
const SINGLES = 3;
/** From the last 202 to the kill: the timers are written by then. */
const BEFORE_KILL_MS = 10_000;
const TEMPORAL_DOWN_MS = 10_000;
/** The down-across variant keeps everything down until this long after send_at. */
const BACK_AFTER_SEND_AT_MS = 15_000;
/** "At its time": every message at the inbox this soon after send_at, or after the restart when later. */
const ON_TIME_MS = 60_000;

const processNames = () => [
  ...Array.from({ length: APIS }, (_, i) => `api-${i}`),
  ...Array.from({ length: WORKERS }, (_, i) => `worker-${i}`),
];

/**
 * A campaign of 200 and three of one recipient, sent with `send_at` 2 minutes ahead through a
 * workspace simulator provider; then `kill -9` of every api and worker and of the Temporal dev
 * server (it comes back on its SQLite file and port), and every process is started again. Odd
 * runs restart well before send_at; even runs keep everything down until 15 s after it, so the
 * timer is overdue when Temporal returns. Nothing may reach the inbox before send_at; after it,
 * every recipient exactly once. The simulator (the phones) is not killed: it holds the inbox.
 */
export const scheduledRestart: Scenario = {
  name: 'scheduled-restart',
  short: false,
  async run(options) {
    const downAcross = options.run % 2 === 0;
    const stack = await ChaosStack.start({ apis: APIS, workers: WORKERS });
    try {
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, {
        name: 'Chaos schedule',
        providers: [{ slug: 'carrier' }],
      });
      const sendAtMs = Math.ceil((Date.now() + AHEAD_MS) / 1000) * 1000;
      const sendAt = new Date(sendAtMs).toISOString();
      const campaigns: SentCampaign[] = [
        await sendCampaign(stack, tenant, {
          label: 'scheduled',
          prefix: '+61413',
          count: 200,
          provider: 'carrier',
          sendAt,
        }),
      ];
      for (let i = 0; i < SINGLES; i++)
        campaigns.push(
          await sendCampaign(stack, tenant, {
            label: `scheduled-single-${i}`,
            recipients: recipients('+61414', 1, i),
            provider: 'carrier',
            sendAt,
          }),
        );
      const answered = campaigns.map((c) => ({
        status: c.accepted.status,
        scheduled_at: c.accepted.scheduled_at,
      }));
      const lookups: { when: string; statuses: (string | null)[] }[] = [
        { when: 'after the 202', statuses: await statuses(stack, tenant, campaigns) },
      ];
      // When the last lookup that must say scheduled was answered: before send_at, or it proves nothing.
      let lookedUpBy = Date.now();

      await sleep(BEFORE_KILL_MS);
      const killedAt = Date.now();
      await Promise.all(processNames().map((name) => stack.kill(name)));
      await stack.killTemporal();
      log(
        `killed every api and worker and Temporal, ${seconds(sendAtMs - killedAt)} s before send_at`,
      );
      await sleep(downAcross ? sendAtMs + BACK_AFTER_SEND_AT_MS - Date.now() : TEMPORAL_DOWN_MS);
      await stack.startTemporal();
      await Promise.all([
        ...Array.from({ length: WORKERS }, (_, i) => stack.startWorker(i)),
        ...Array.from({ length: APIS }, (_, i) => stack.startApi(i)),
      ]);
      const backAt = Date.now();
      log(`every process back, ${seconds(backAt - sendAtMs)} s from send_at`);
      if (!downAcross) {
        lookups.push({
          when: 'after the restart',
          statuses: await statuses(stack, tenant, campaigns),
        });
        lookedUpBy = Date.now();
      }

      const completed = await untilAllCompleted(
        stack,
        campaigns.map((c) => c.id),
        Math.max(backAt, sendAtMs) + 180_000 - Date.now(),
      );
      const completedAt = Date.now();
      await sleep(1_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const arrivals = campaigns.flatMap((c) => arrivalsOf(inbox, c));
      const times = arrivals.map((message) => Date.parse(message.received_at));
      const early = times.filter((at) => at < sendAtMs).length;
      const wrong = campaigns.flatMap((c) => notExactlyOnce(inbox, c));
      const audit = await auditCampaigns(stack, tenant.workspaceId, inbox);
      const counters = await Promise.all(campaigns.map((c) => apiCounters(stack, tenant, c)));
      const deaths = stack.deaths();
      const lastAt = times.length > 0 ? Math.max(...times) : null;
      const onTimeFrom = Math.max(sendAtMs, backAt);
      const beforeSendAt = lookups.flatMap((lookup) => lookup.statuses);
      return {
        figures: {
          variant: downAcross ? 'down across send_at' : 'restarted before send_at',
          send_at: sendAt,
          killed_s_before_send_at: seconds(sendAtMs - killedAt),
          back_s_from_send_at: seconds(backAt - sendAtMs),
          recipients: campaigns.reduce((n, c) => n + c.recipients.length, 0),
          received: arrivals.length,
          received_before_send_at: early,
          // Lateness at the inbox: its first and last message, from send_at.
          first_late_s: times.length > 0 ? seconds(Math.min(...times) - sendAtMs) : null,
          last_late_s: lastAt === null ? null : seconds(lastAt - sendAtMs),
          completed_s_from_send_at: completed ? seconds(completedAt - sendAtMs) : null,
          answered,
          lookups,
          campaigns: counters.map((c, i) => ({ id: campaigns[i]?.id, ...c })),
          not_exactly_once: wrong.slice(0, 5),
          workspace: audit,
          deaths,
        },
        checks: [
          check(
            'answered scheduled',
            answered,
            answered.every((a) => a.status === 'scheduled' && a.scheduled_at === sendAt),
            'every 202 says scheduled, at send_at',
          ),
          check(
            'scheduled until its time',
            lookups,
            lookedUpBy < sendAtMs && beforeSendAt.every((status) => status === 'scheduled'),
            'each lookup before send_at (after the 202, after the restart) says scheduled',
          ),
          check(
            'restart as planned',
            seconds(backAt - sendAtMs),
            downAcross ? backAt > sendAtMs : backAt < sendAtMs,
            downAcross ? 'every process back after send_at' : 'every process back before send_at',
          ),
          check('nothing before send_at', early, early === 0, '0 messages received before send_at'),
          check(
            'each recipient once',
            { recipients: wrong.length, examples: wrong.slice(0, 5) },
            wrong.length === 0,
            'every recipient of every campaign received its message exactly once',
          ),
          ...exactlyOnceChecks(audit, counters),
          check(
            'on time',
            lastAt === null ? null : seconds(lastAt - onTimeFrom),
            completed && lastAt !== null && lastAt - onTimeFrom <= ON_TIME_MS,
            `every message at the inbox within ${ON_TIME_MS / 1000} s of send_at (or of the restart when later)`,
          ),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};

async function statuses(stack: ChaosStack, tenant: Tenant, campaigns: SentCampaign[]) {
  return Promise.all(
    campaigns.map(
      async (c) => (await campaignView(stack.apiUrls[0] as string, tenant, c.id))?.status ?? null,
    ),
  );
}
