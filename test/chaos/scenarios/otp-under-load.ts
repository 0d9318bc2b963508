import { randomBytes } from 'node:crypto';
import { openFloor } from '../../../bench/floor/measure.js';
import { measureLatency } from '../../../bench/support/measure.js';
import {
  type Answer,
  call,
  campaignView,
  createTenant,
  spreadRecipients,
  type Tenant,
} from '../support/api.js';
import {
  auditCampaigns,
  auditOtps,
  clearInbox,
  readInbox,
  setBehaviour,
} from '../support/audit.js';
import {
  exactlyOnceChecks,
  type SentCampaign,
  sendCampaign,
  untilAllCompleted,
} from '../support/campaign.js';
import { isFinalOtp } from '../support/probes.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, percentile, seconds, sleep, tally, waitUntil } from '../support/timing.js';

const IDLE_SENDS = 30;
const CAMPAIGNS = 20;
const CAMPAIGN_SIZE = 1000;
const LOADED_SENDS = 50;
const LOADED_SEQUENTIAL_SENDS = 20;
/** A provider that answers in 50 ms, as a real one might. */
const PROVIDER_LATENCY_MS = 50;

/**
 * OTP latency idle, then while 20 campaigns of 1,000 recipients run in the same workspace: 50
 * concurrent OTP sends (p50, p99, how many answered `pending`), and at the same moment a
 * 1-recipient campaign of a second workspace (time until completed). The loaded burst is judged
 * against the same burst with nothing else running, and that one is shown beside Temporal's own
 * floor for it: 50 bare Update-with-Starts on the same server, which take far longer than one.
 */
export const otpUnderLoad: Scenario = {
  name: 'otp-under-load',
  short: false,
  async run(options) {
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      await setBehaviour(stack.simulatorUrl, { latency_ms: PROVIDER_LATENCY_MS });
      const busy = await createTenant(stack, { name: 'Chaos busy', credits: 1_000_000 });
      const other = await createTenant(stack, { name: 'Chaos other' });
      const tag = randomBytes(4).toString('hex');
      const otp = async (tenant: Tenant, recipient: string, key: string) => {
        const answer = await call(stack.apiUrls[0] as string, 'POST', '/api/v1/otp/send', {
          token: tenant.token,
          key,
          body: { recipient, purpose: 'login' },
        });
        // 409: the key's first request still holds it; the contract says retry, as the loop does.
        const { status } = answer;
        if (typeof status === 'number' && status >= 400 && status < 500 && status !== 409)
          throw new Error(`OTP send answered ${status}: ${JSON.stringify(answer.body)}`);
        return answer;
      };

      const idleTo = spreadRecipients('+61401', IDLE_SENDS + 5);
      for (let i = 0; i < 5; i++) await otp(busy, idleTo[i] as string, `warm-${tag}-${i}`);
      const idle: Answer[] = [];
      for (let i = 5; i < idleTo.length; i++)
        idle.push(await otp(busy, idleTo[i] as string, `idle-${tag}-${i}`));

      // The loaded burst's own shape without the campaigns: how much of its latency is the burst.
      const idleBurst = await Promise.all(
        spreadRecipients('+61403', LOADED_SENDS).map((to, i) =>
          otp(busy, to, `idle-burst-${tag}-${i}`),
        ),
      );
      const floorBurst = await bareUpdateWithStartBurst(stack, LOADED_SENDS);

      log(`${CAMPAIGNS} campaigns of ${CAMPAIGN_SIZE}`);
      const load = await Promise.all(
        Array.from({ length: CAMPAIGNS }, (_, i) =>
          sendCampaign(stack, busy, {
            label: `load-${i}`,
            prefix: `+6146${String(i).padStart(2, '0')}`,
            count: CAMPAIGN_SIZE,
          }),
        ),
      );
      const loadIds = load.map((campaign) => campaign.id);
      await waitUntil(
        'the campaigns to be sending',
        () =>
          stack.withSql(async (sql) => {
            const [row] = await sql<{ n: number }[]>`
              select count(*)::int as n from campaign_messages
              where campaign_id = any(${loadIds}::bigint[]) and status = 'sent'`;
            return (row?.n ?? 0) >= 500 ? true : undefined;
          }),
        120_000,
        100,
      );

      log(`${LOADED_SEQUENTIAL_SENDS} OTP sends one at a time`);
      const loadedOneAtATime: Answer[] = [];
      for (const [i, to] of spreadRecipients('+61405', LOADED_SEQUENTIAL_SENDS).entries())
        loadedOneAtATime.push(await otp(busy, to, `loaded-one-${tag}-${i}`));
      const openAfterOneAtATime = await openCampaigns(stack, loadIds);

      log(`${LOADED_SENDS} OTP sends and another workspace's 1-recipient campaign`);
      const loadedTo = spreadRecipients('+61402', LOADED_SENDS);
      const burstStarted = Date.now();
      const [loaded, small] = await Promise.all([
        Promise.all(loadedTo.map((to, i) => otp(busy, to, `loaded-${tag}-${i}`))),
        timeToCompleted(stack, other, loadIds),
      ]);
      const openAfter = await openCampaigns(stack, loadIds);

      // Pending codes are retried with their key, as the contract asks of a client.
      const pending = loaded
        .map((answer, i) => ({ answer, i }))
        .filter(({ answer }) => !isFinalOtp(answer));
      const retryDeadline = Date.now() + 120_000;
      await Promise.all(
        pending.map(async ({ i }) => {
          while (Date.now() < retryDeadline) {
            if (isFinalOtp(await otp(busy, loadedTo[i] as string, `loaded-${tag}-${i}`))) return;
            await sleep(1000);
          }
        }),
      );
      const completed = await untilAllCompleted(stack, [...loadIds, small.campaign.id], 300_000);
      await sleep(1_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const busyAudit = await auditCampaigns(stack, busy.workspaceId, inbox);
      const otherAudit = await auditCampaigns(stack, other.workspaceId, inbox);
      const otps = await auditOtps(stack, busy.workspaceId, inbox);
      const deaths = stack.deaths();
      const ms = (answers: Answer[]) => answers.map((answer) => answer.ms);
      const idleP50 = percentile(ms(idle), 50) ?? 0;
      const idleBurstP50 = percentile(ms(idleBurst), 50) ?? 0;
      const loadedP50 = percentile(ms(loaded), 50) ?? 0;
      const loadedOneP50 = percentile(ms(loadedOneAtATime), 50) ?? 0;
      const pendingOneAtATime = loadedOneAtATime.filter((answer) => !isFinalOtp(answer)).length;
      const ratio = (a: number, b: number | null) => Number((a / Math.max(1, b ?? 0)).toFixed(2));
      const statuses = tally(loaded.map((answer) => answer.body?.data?.status ?? answer.status));
      const pendingCount = statuses.pending ?? 0;
      // When each loaded code reached the phone, from the burst's start: a pending answer whose
      // code came soon after is a slow answer; one that came late is a code that waited.
      const toPhone = loadedTo.flatMap((to) => {
        const code = inbox.find((message) => message.to === to);
        return code ? [Date.parse(code.received_at) - burstStarted] : [];
      });
      return {
        figures: {
          lost: busyAudit.lost + otherAudit.lost,
          duplicated: busyAudit.duplicated + otherAudit.duplicated,
          sent: busyAudit.sent + otherAudit.sent,
          failed: busyAudit.failed + otherAudit.failed,
          total: busyAudit.total + otherAudit.total,
          orphans: (busyAudit.orphans ?? 0) + (otherAudit.orphans ?? 0),
          otp_idle: { sends: idle.length, p50_ms: idleP50, p99_ms: percentile(ms(idle), 99) },
          otp_idle_burst: {
            sends: idleBurst.length,
            p50_ms: idleBurstP50,
            p99_ms: percentile(ms(idleBurst), 99),
            answers: tally(idleBurst.map((answer) => answer.body?.data?.status ?? answer.status)),
            temporal_floor: floorBurst,
            p50_over_floor: ratio(idleBurstP50, floorBurst.p50_ms),
          },
          otp_loaded_one_at_a_time: {
            sends: loadedOneAtATime.length,
            p50_ms: loadedOneP50,
            p99_ms: percentile(ms(loadedOneAtATime), 99),
            answers: tally(
              loadedOneAtATime.map((answer) => answer.body?.data?.status ?? answer.status),
            ),
            p50_over_idle: ratio(loadedOneP50, idleP50),
            load_campaigns_still_sending: openAfterOneAtATime,
          },
          otp_loaded: {
            sends: loaded.length,
            p50_ms: loadedP50,
            p99_ms: percentile(ms(loaded), 99),
            max_ms: Math.round(Math.max(...ms(loaded))),
            answers: statuses,
            p50_over_idle_burst: ratio(loadedP50, idleBurstP50),
            code_at_phone_ms: {
              p50: percentile(toPhone, 50),
              p99: percentile(toPhone, 99),
              max: percentile(toPhone, 100),
            },
          },
          other_workspace_campaign: {
            completed_s: small.seconds,
            load_campaigns_still_sending: small.openLoadCampaigns,
          },
          load_campaigns_still_sending_after_burst: openAfter,
          otps,
          failed_but_received: busyAudit.failed_but_received,
          failed_errors: busyAudit.failed_errors,
          deaths,
        },
        checks: [
          ...exactlyOnceChecks(busyAudit, []),
          ...exactlyOnceChecks(otherAudit, []).filter((c) => c.name === 'duplicated'),
          check(
            'otp duplicated',
            otps.duplicated,
            otps.duplicated === 0,
            '0 recipients with 2+ codes',
          ),
          check(
            'otp p50 under load, one at a time',
            { idle: idleP50, loaded: loadedOneP50, campaigns_sending: openAfterOneAtATime },
            loadedOneP50 <= 2 * idleP50 && openAfterOneAtATime > 0,
            'within 2× the idle p50 of sends one at a time, the campaigns still sending after',
          ),
          check(
            'otp p50 under load',
            { idle_burst: idleBurstP50, loaded: loadedP50 },
            loadedP50 <= 2 * idleBurstP50,
            'within 2× the p50 of the same burst with no campaigns running',
          ),
          check(
            'otp pending',
            pendingCount + pendingOneAtATime,
            pendingCount + pendingOneAtATime === 0,
            '0 pending, the provider healthy',
          ),
          check(
            'other workspace campaign',
            small.seconds,
            small.seconds !== null && small.seconds <= 2,
            'a 1-recipient campaign of another workspace completes within 2 s',
          ),
          check(
            'load still running',
            small.openLoadCampaigns,
            small.openLoadCampaigns > 0,
            'the campaigns were still sending while it was measured (else it measured nothing)',
          ),
          check('campaigns completed', completed, completed, 'within 300 s'),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};

/** `concurrency` bare Update-with-Starts at once on the stack's Temporal, after a warm-up. */
async function bareUpdateWithStartBurst(stack: ChaosStack, concurrency: number) {
  const floor = await openFloor(stack.temporalAddress, 'default');
  try {
    await floor.warmUp();
    return await measureLatency(concurrency, concurrency, floor.updateWithStart);
  } finally {
    await floor.close();
  }
}

async function openCampaigns(stack: ChaosStack, ids: number[]): Promise<number> {
  return stack.withSql(async (sql) => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from campaigns
      where id = any(${ids}::bigint[]) and status <> 'completed'`;
    return row?.n ?? 0;
  });
}

/** Seconds from the request to seeing the campaign completed (null: not within 60 s). */
async function timeToCompleted(stack: ChaosStack, tenant: Tenant, loadIds: number[]) {
  const started = performance.now();
  const campaign: SentCampaign = await sendCampaign(stack, tenant, {
    label: 'other',
    prefix: '+614700',
    count: 1,
  });
  const deadline = Date.now() + 60_000;
  let elapsed: number | null = null;
  while (Date.now() < deadline) {
    const view = await campaignView(stack.apiUrls[0] as string, tenant, campaign.id);
    if (view?.status === 'completed') {
      elapsed = performance.now() - started;
      break;
    }
    await sleep(50);
  }
  const openLoadCampaigns = await openCampaigns(stack, loadIds);
  return { campaign, seconds: elapsed === null ? null : seconds(elapsed), openLoadCampaigns };
}
