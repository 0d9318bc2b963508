import { call, createTenant, recipients, type Tenant } from './api.js';
import { auditCampaigns, auditOtps, clearInbox, readInbox } from './audit.js';
import {
  apiCounters,
  arrivalsBetween,
  exactlyOnceChecks,
  firstArrivalAfter,
  sendCampaign,
  untilAllCompleted,
  untilArrived,
} from './campaign.js';
import { Prober, type WindowSummary } from './probes.js';
import { type Check, check, type ScenarioOptions, type ScenarioResult } from './scenario.js';
import { ChaosStack } from './stack.js';
import { log, seconds, sleep, waitUntil } from './timing.js';

/**
 * A paced campaign through a workspace simulator provider, with a dependency taken away
 * `outages` times while it runs and a client probing the api throughout.
 */
export interface OutagePlan {
  dependency: 'temporal' | 'postgres';
  recipients: number;
  messagesPerSecond: number;
  outages: number;
  downMs: number;
  /** The first outage begins once this many messages arrived; the next ones `gapMs` after. */
  firstAfterArrivals: number;
  gapMs: number;
  /** Hold the requests answered during the outage to the rule (≤ 5 s, no 500, no hang). */
  requestChecks: boolean;
}

/** Statuses an answer during a Postgres outage may have: 503, or 200/202 where none is needed. */
const ALLOWED_DURING_OUTAGE = new Set(['200', '202', '503']);

interface OutageFigures {
  down_s: number;
  arrivals_during: number;
  requests: WindowSummary;
  health_ok_after_s: number | null;
  progress_after_s: number | null;
}

export async function runOutage(
  plan: OutagePlan,
  options: ScenarioOptions,
): Promise<ScenarioResult> {
  const stack = await ChaosStack.start({ apis: 1, workers: 1, env: { MCP_ENABLED: 'true' } });
  try {
    await clearInbox(stack.simulatorUrl);
    const tenant = await createTenant(stack, {
      name: `Chaos ${plan.dependency}`,
      credits: 100_000,
      providers: [{ slug: 'paced', messagesPerSecond: plan.messagesPerSecond }],
    });
    const otp = await firstOtp(stack, tenant);
    const started = Date.now();
    const campaign = await sendCampaign(stack, tenant, {
      label: plan.dependency,
      prefix: '+61410',
      count: plan.recipients,
      provider: 'paced',
    });
    const prober = new Prober(stack.apiUrls[0] as string, tenant, {
      campaignId: campaign.id,
      otp,
      mcp: true,
      prefix: '+61430',
    });
    prober.start();

    const windows: { from: number; to: number }[] = [];
    const healthOk: Promise<number | null>[] = [];
    await untilArrived(stack, campaign, plan.firstAfterArrivals);
    for (let outage = 0; outage < plan.outages; outage++) {
      if (outage > 0) await sleep(plan.gapMs);
      log(`${plan.dependency} down (${outage + 1} of ${plan.outages})`);
      const from = Date.now();
      if (plan.dependency === 'postgres') await stack.stopPostgres();
      else await stack.killTemporal();
      await sleep(plan.downMs - (Date.now() - from));
      if (plan.dependency === 'postgres') await stack.startPostgres();
      else await stack.startTemporal();
      const to = Date.now();
      windows.push({ from, to });
      healthOk.push(healthAfter(stack, to));
      log(`${plan.dependency} back after ${seconds(to - from)} s`);
    }
    const lastBack = windows.at(-1)?.to ?? Date.now();
    const completed = await untilAllCompleted(stack, [campaign.id], 300_000);
    const completedAt = Date.now();
    await sleep(2_000);
    await prober.stop();
    const settled = await prober.settle(stack.apiUrls);
    const probesCompleted = await untilAllCompleted(stack, prober.campaignIds(), 120_000);
    await sleep(1_000);

    const health = await Promise.all(healthOk);
    const inbox = await readInbox(stack.simulatorUrl);
    const audit = await auditCampaigns(stack, tenant.workspaceId, inbox);
    const otps = await auditOtps(stack, tenant.workspaceId, inbox);
    const counters = await apiCounters(stack, tenant, campaign);
    const deaths = stack.deaths();
    const outages: OutageFigures[] = windows.map((window, index) => ({
      down_s: seconds(window.to - window.from),
      arrivals_during: arrivalsBetween(inbox, campaign, window.from, window.to),
      requests: prober.summary(window.from, window.to),
      health_ok_after_s: health[index] ?? null,
      progress_after_s: firstArrivalAfter(inbox, campaign, window.to),
    }));

    const checks: Check[] = [
      ...exactlyOnceChecks(audit, [counters]),
      check(
        'campaign completed',
        completed ? seconds(completedAt - lastBack) : null,
        completed,
        `completed within 300 s of ${plan.dependency} returning`,
      ),
      check('otp duplicated', otps.duplicated, otps.duplicated === 0, '0 recipients with 2+ codes'),
      check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
    ];
    if (plan.requestChecks) {
      const during = outages.map((outage) => outage.requests);
      const slow = during.reduce((sum, window) => sum + window.over_5s, 0);
      const errors = during.reduce((sum, window) => sum + window.status_500, 0);
      const statuses = [...new Set(during.flatMap((window) => Object.keys(window.by_status)))];
      checks.push(
        check('requests over 5 s or unanswered', slow, slow === 0, 'every request answered ≤ 5 s'),
        check('500 answers', errors, errors === 0, '0 × 500'),
        check(
          'statuses during the outage',
          statuses,
          statuses.every((status) => ALLOWED_DURING_OUTAGE.has(status)),
          '503, or 200/202 where Postgres is not needed',
        ),
      );
    }
    return {
      figures: {
        lost: audit.lost,
        duplicated: audit.duplicated,
        sent: counters?.sent ?? null,
        failed: counters?.failed ?? null,
        total: counters?.total ?? null,
        orphans: audit.orphans,
        campaign: { id: campaign.id, ...counters, seconds: seconds(completedAt - started) },
        // Serving again: /health 200 and the campaign's messages arriving, after the slowest outage.
        time_to_recover_s: outages.some((o) => o.health_ok_after_s === null)
          ? null
          : Math.max(
              ...outages.map((o) => Math.max(o.health_ok_after_s ?? 0, o.progress_after_s ?? 0)),
            ),
        completed_after_s: completed ? seconds(completedAt - lastBack) : null,
        outages,
        workspace: audit,
        otps,
        probes_settled: { ...settled, campaigns_completed: probesCompleted },
        deaths,
      },
      checks,
    };
  } finally {
    await stack.close(options.keep);
  }
}

/** An accepted OTP request made before any fault, for the verify probe. */
async function firstOtp(stack: ChaosStack, tenant: Tenant) {
  const [recipient] = recipients('+61440', 1);
  const answer = await call(stack.apiUrls[0] as string, 'POST', '/api/v1/otp/send', {
    token: tenant.token,
    key: `chaos-first-otp-${tenant.slug}`,
    body: { recipient, purpose: 'login' },
  });
  if (answer.status !== 202)
    throw new Error(`OTP send answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return { requestId: answer.body.data.request_id as string, recipient: recipient as string };
}

/** Seconds from `since` until /health answers 200 again (null: not within 120 s). */
async function healthAfter(stack: ChaosStack, since: number): Promise<number | null> {
  try {
    const at = await waitUntil(
      '/health to answer 200',
      async () => {
        const answer = await call(stack.apiUrls[0] as string, 'GET', '/health', {
          timeoutMs: 5_000,
        });
        return answer.status === 200 ? Date.now() : undefined;
      },
      120_000,
      250,
    );
    return seconds(at - since);
  } catch {
    return null;
  }
}
