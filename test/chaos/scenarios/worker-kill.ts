import { campaignView, createTenant } from '../support/api.js';
import { auditCampaigns, clearInbox, readInbox, setBehaviour } from '../support/audit.js';
import {
  apiCounters,
  exactlyOnceChecks,
  firstArrivalAfter,
  type SentCampaign,
  sendCampaign,
  sumCounters,
  untilAllCompleted,
  untilArrived,
} from '../support/campaign.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep } from '../support/timing.js';

/** Slow enough that a batch of submissions is always in flight. */
const PROVIDER_LATENCY_MS = 300;
const MESSAGES_PER_SECOND = 20;

type Point = 'early' | 'middle' | 'settle';

interface Kill {
  phase: 'one worker' | 'two workers';
  point: Point;
  worker: string;
  /** Messages at the inbox when the worker died. */
  arrived: number;
  /** Of those, not yet recorded as sent by Herald: submissions the takeover must settle. */
  unsettled: number | null;
  status_at_kill: string | null;
  /** Seconds from the kill to the campaign's next message at the inbox (null: none came). */
  next_arrival_s: number | null;
  restarted: boolean;
}

/**
 * `kill -9` of a worker at several points of a campaign paced at 20 messages/s with 300 ms of
 * provider latency: early, in the middle, and during settlement (every message at the inbox,
 * the campaign not yet completed); each time a new worker starts. Then with two workers, one is
 * killed in the middle and the other must take over. Campaigns of 1,000. Short: one kill, in
 * the middle of a campaign of 200.
 */
export const workerKill: Scenario = {
  name: 'worker-kill',
  short: true,
  async run(options) {
    // The full drill's campaigns are cut into chunks of 250 (workflows/campaign.ts), the short
    // one's into chunks of 100: a kill lands mid-chunk in both sizes.
    const size = options.short ? 200 : 1000;
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      await setBehaviour(stack.simulatorUrl, { latency_ms: PROVIDER_LATENCY_MS });
      const tenant = await createTenant(stack, {
        name: 'Chaos worker',
        providers: [{ slug: 'paced', messagesPerSecond: MESSAGES_PER_SECOND }],
      });
      const kills: Kill[] = [];
      const killedAt: { campaign: SentCampaign; at: number }[] = [];
      const killAt = async (
        campaign: SentCampaign,
        phase: Kill['phase'],
        point: Point,
        worker: string,
        restart: boolean,
      ) => {
        const arrived =
          point === 'settle'
            ? await untilArrived(stack, campaign, size)
            : await untilArrived(stack, campaign, point === 'early' ? 20 : size / 2);
        const at = Date.now();
        await stack.kill(worker);
        const view = await campaignView(stack.apiUrls[0] as string, tenant, campaign.id);
        log(`killed ${worker} (${point}) with ${arrived} messages at the inbox`);
        kills.push({
          phase,
          point,
          worker,
          arrived,
          unsettled: view ? arrived - view.sent_count : null,
          status_at_kill: view?.status ?? null,
          next_arrival_s: null,
          restarted: restart,
        });
        killedAt.push({ campaign, at });
        if (restart) await stack.startWorker(Number(worker.split('-')[1]));
      };

      const started = Date.now();
      const first = await sendCampaign(stack, tenant, {
        label: 'worker-one',
        prefix: '+61411',
        count: size,
        provider: 'paced',
      });
      const points: Point[] = options.short ? ['middle'] : ['early', 'middle', 'settle'];
      for (const point of points) await killAt(first, 'one worker', point, 'worker-0', true);
      const campaigns = [first];
      if (!options.short) {
        await stack.startWorker(1);
        const second = await sendCampaign(stack, tenant, {
          label: 'worker-two',
          prefix: '+61412',
          count: size,
          provider: 'paced',
        });
        campaigns.push(second);
        await killAt(second, 'two workers', 'middle', 'worker-1', false);
      }
      const completed = await untilAllCompleted(
        stack,
        campaigns.map((campaign) => campaign.id),
        300_000,
      );
      const lastKill = Math.max(...killedAt.map((kill) => kill.at));
      const completedAt = Date.now();
      await sleep(1_000);

      const inbox = await readInbox(stack.simulatorUrl);
      kills.forEach((kill, index) => {
        const { campaign, at } = killedAt[index] as { campaign: SentCampaign; at: number };
        kill.next_arrival_s = firstArrivalAfter(inbox, campaign, at);
      });
      const audit = await auditCampaigns(stack, tenant.workspaceId, inbox);
      const counters = await Promise.all(
        campaigns.map((campaign) => apiCounters(stack, tenant, campaign)),
      );
      const deaths = stack.deaths();
      const totals = sumCounters(counters);
      const missed = kills.filter((kill) => kill.status_at_kill !== 'queued');
      return {
        figures: {
          lost: audit.lost,
          duplicated: audit.duplicated,
          ...totals,
          orphans: audit.orphans,
          // The slowest takeover: from a kill to the campaign's next message at the inbox.
          time_to_recover_s: Math.max(0, ...kills.map((kill) => kill.next_arrival_s ?? 0)),
          completed_after_s: completed ? seconds(completedAt - lastKill) : null,
          kills,
          campaigns: counters.map((c, i) => ({ id: campaigns[i]?.id, ...c })),
          seconds_sending: seconds(completedAt - started),
          workspace: audit,
          deaths,
        },
        checks: [
          ...exactlyOnceChecks(audit, counters),
          check('campaigns completed', completed, completed, 'within 300 s of the last kill'),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
          check(
            'kills landed mid-campaign',
            missed.map((kill) => kill.point),
            missed.length === 0,
            'every kill while the campaign was queued (else the drill did not test it)',
          ),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};
