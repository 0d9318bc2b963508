import { randomBytes } from 'node:crypto';
import { createTenant, recipients } from '../support/api.js';
import { clearInbox, readInbox } from '../support/audit.js';
import {
  answerFigures,
  inboxBySend,
  type LogicalSend,
  type SendOutcome,
  sendAsInvited,
  untilWorkspaceCompleted,
  workspaceCampaigns,
} from '../support/keyless.js';
import { check, type Scenario } from '../support/scenario.js';
import { visitSecretPaths } from '../support/secret-paths.js';
import { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep } from '../support/timing.js';

/** Sends fired together just before the freeze, to be caught inside their transaction. */
const BURST = 10;
/** Each later send this long after the previous one, during the freeze. */
const SPREAD_MS = 300;

/**
 * Sends without an Idempotency-Key in flight while Postgres is frozen (SIGSTOP of the
 * postmaster and its backends, then SIGCONT): 10 fired together just before the freeze, the
 * rest one every 0.3 s into it. The client does what each answer invites (keyless.ts): waits
 * out a 503 and sends again, looks a campaign up first when the 503 says it may have been saved,
 * stops at a 202. Each send's recipients must get its SMS exactly once, every campaign must
 * complete, and a campaign answered 202 `paused` must be dispatched by Herald, never by a retry.
 * Short: 12 sends of 50, frozen 8 s.
 */
export const keylessPostgresFreeze: Scenario = {
  name: 'keyless-postgres-freeze',
  short: true,
  async run(options) {
    const sendCount = options.short ? 12 : 30;
    const perSend = options.short ? 50 : 100;
    const freezeMs = options.short ? 8_000 : 12_000;
    const settleMs = options.short ? 90_000 : 240_000;
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, { name: 'Chaos keyless', credits: 100 });
      const secretPaths = await visitSecretPaths(stack, tenant);
      const tag = randomBytes(4).toString('hex');
      const sends: LogicalSend[] = Array.from({ length: sendCount }, (_, i) => ({
        label: `send ${i}`,
        request: {
          recipients: recipients(`+6145${String(i).padStart(2, '0')}`, perSend),
          message: `Chaos keyless ${tag}-${i}: your parcel is on its way.`,
        },
      }));

      const running: Promise<SendOutcome>[] = [];
      const fire = (send: LogicalSend) => running.push(sendAsInvited(stack.apiUrls, tenant, send));
      for (const send of sends.slice(0, BURST)) fire(send);
      await sleep(40 + 40 * (options.run % 4));
      await stack.freezePostgres();
      const frozenAt = Date.now();
      log(`Postgres frozen with ${BURST} keyless sends in flight`);
      for (const send of sends.slice(BURST)) {
        await sleep(SPREAD_MS);
        fire(send);
      }
      await sleep(freezeMs - (Date.now() - frozenAt));
      await stack.thawPostgres();
      const thawedAt = Date.now();
      log(`Postgres thawed after ${seconds(thawedAt - frozenAt)} s`);

      const outcomes = await Promise.all(running);
      const endedAt = Date.now();
      const settledMs = await untilWorkspaceCompleted(stack, tenant.workspaceId, settleMs);
      await sleep(2_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const received = inboxBySend(inbox, sends);
      const campaigns = await workspaceCampaigns(stack, tenant.workspaceId, sends);
      const answers = answerFigures(outcomes);
      const paused = outcomes.filter((outcome) => outcome.end === 'paused');
      const pausedIds = paused.map((outcome) => outcome.campaignId as number);
      const pausedOpen = campaigns.open.filter((open) => pausedIds.includes(open.id));
      const unfinished = outcomes.filter((outcome) => outcome.campaignId === null).length;
      const deaths = stack.deaths();
      return {
        figures: {
          lost: received.lost,
          duplicated: received.duplicated,
          sends: sendCount,
          recipients: received.recipients,
          frozen_s: seconds(thawedAt - frozenAt),
          ...answers,
          campaigns: campaigns.campaigns,
          campaigns_by_status: campaigns.by_status,
          sends_with_several_campaigns: campaigns.sends_with_several,
          sends_with_no_campaign: campaigns.sends_with_none,
          paused: paused.length,
          clients_done_after_thaw_s: seconds(endedAt - thawedAt),
          completed_after_thaw_s:
            settledMs === null ? null : seconds(endedAt + settledMs - thawedAt),
          inbox: received,
          open_campaigns: campaigns.open.slice(0, 10),
          secret_paths: secretPaths,
          deaths,
        },
        checks: [
          check(
            'duplicated',
            received.duplicated,
            received.duplicated === 0,
            '0 recipients with 2+ copies of their send',
          ),
          check('lost', received.lost, received.lost === 0, 'every recipient of every send got it'),
          check(
            'one campaign per send',
            {
              campaigns: campaigns.campaigns,
              several: campaigns.sends_with_several,
              none: campaigns.sends_with_none,
            },
            campaigns.campaigns === sendCount &&
              campaigns.sends_with_several === 0 &&
              campaigns.sends_with_none === 0,
            `${sendCount} campaigns for ${sendCount} keyless sends`,
          ),
          check('500 answers', answers.status_500, answers.status_500 === 0, '0 × 500'),
          check(
            'sends ended',
            answers.ends,
            unfinished === 0,
            'every send ends with its campaign: 202, or a 503 naming one the lookup finds',
          ),
          check(
            'campaigns completed',
            { open: campaigns.open.length, by_status: campaigns.by_status },
            settledMs !== null && campaigns.open.length === 0,
            `none paused or queued ${settleMs / 1000} s after the clients are done`,
          ),
          check(
            'paused dispatched by Herald',
            { paused: paused.length, not_completed: pausedOpen.length },
            pausedOpen.length === 0,
            'every campaign answered 202 paused completed without a retry',
          ),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};
