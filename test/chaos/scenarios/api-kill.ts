import { randomBytes } from 'node:crypto';
import {
  type Answer,
  call,
  createTenant,
  isFinalSend,
  recipients,
  sendUntilFinal,
} from '../support/api.js';
import { auditCampaigns, clearInbox, readInbox } from '../support/audit.js';
import {
  apiCounters,
  exactlyOnceChecks,
  sumCounters,
  untilAllCompleted,
} from '../support/campaign.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, percentile, seconds, sleep, tally } from '../support/timing.js';

const SENDS = 20;
const RECIPIENTS_PER_SEND = 200;
/** The api dies as soon as this many of the sends have saved their campaign. */
const KILL_AFTER_CAMPAIGNS = 2;
const RETRY_GOAL_S = 10;

/**
 * 20 sends with Idempotency-Keys in flight to one api, which is killed (`kill -9`) as soon as
 * the first campaigns are saved; every key is retried against a second api until its answer is
 * final, and the first api is started again. Each key must end with exactly one campaign and
 * every recipient with one message.
 */
export const apiKill: Scenario = {
  name: 'api-kill',
  short: true,
  async run(options) {
    const stack = await ChaosStack.start({ apis: 2, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, { name: 'Chaos api' });
      const [dying, survivor] = stack.apiUrls as [string, string];
      const tag = randomBytes(4).toString('hex');
      const sends = Array.from({ length: SENDS }, (_, i) => {
        const key = `chaos-api-${tag}-${i}`;
        return {
          key,
          request: {
            recipients: recipients(`+6142${String(i).padStart(2, '0')}`, RECIPIENTS_PER_SEND),
            message: `Chaos api ${key}: your parcel is on its way.`,
          },
        };
      });

      // The kill: as soon as Postgres shows the first campaigns, while the rest are mid-request.
      let killedAt = 0;
      const killer = stack.withSql(async (sql) => {
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline) {
          const [row] = await sql<{ n: number }[]>`
            select count(*)::int as n from campaigns where workspace_id = ${tenant.workspaceId}`;
          if ((row?.n ?? 0) >= KILL_AFTER_CAMPAIGNS) break;
          await sleep(2);
        }
        killedAt = Date.now();
        await stack.kill('api-0');
        log(`killed api-0 with the sends in flight`);
      });
      const firstAnswers: Answer[] = await Promise.all(
        sends.map(({ key, request }) =>
          call(dying, 'POST', '/api/v1/messages', {
            token: tenant.token,
            key,
            body: { ...request, reference: key },
          }),
        ),
      );
      await killer;
      const restarting = stack.startApi(0).then(
        () => true,
        (error: Error) => {
          log(`api-0 did not start again: ${error.message}`);
          return false;
        },
      );

      const outcomes = await Promise.all(
        sends.map(async ({ key, request }, index) => {
          const first = firstAnswers[index] as Answer;
          const inFlight = !isFinalSend(first);
          const { id, answers } = await sendUntilFinal([survivor], tenant, request, key, {
            firstAnswer: first,
            deadlineMs: 120_000,
          });
          return { id, inFlight, answers, servedAt: Date.now() };
        }),
      );
      const restarted = await restarting;
      const inFlight = outcomes.filter((outcome) => outcome.inFlight);
      const served = inFlight.map((outcome) => seconds(outcome.servedAt - killedAt));
      const retryAnswers = inFlight.flatMap((outcome) =>
        outcome.answers.slice(1).map((answer) => answer.status),
      );
      const ids = outcomes.map((outcome) => outcome.id);
      const completed = await untilAllCompleted(stack, ids, 180_000);
      await sleep(1_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const audit = await auditCampaigns(stack, tenant.workspaceId, inbox);
      const counters = await Promise.all(ids.map((id) => apiCounters(stack, tenant, { id })));
      const deaths = stack.deaths();
      const slowest = served.length > 0 ? Math.max(...served) : 0;
      return {
        figures: {
          lost: audit.lost,
          duplicated: audit.duplicated,
          ...sumCounters(counters),
          orphans: audit.orphans,
          keys_with_several_campaigns: audit.keys_with_several_campaigns,
          campaigns: audit.campaigns,
          time_to_recover_s: slowest,
          first_answers: tally(firstAnswers.map((answer) => answer.status)),
          in_flight_at_kill: inFlight.length,
          retry_served_s: {
            p50: percentile(served, 50),
            max: served.length > 0 ? slowest : null,
          },
          retry_answers: tally(retryAnswers),
          api_restarted: restarted,
          workspace: audit,
          deaths,
        },
        checks: [
          ...exactlyOnceChecks(audit, counters),
          check(
            'one campaign per key',
            audit.keys_with_several_campaigns,
            audit.keys_with_several_campaigns === 0 && audit.campaigns === SENDS,
            `${SENDS} campaigns for ${SENDS} keys`,
          ),
          check(
            'retry served',
            served.length > 0 ? slowest : null,
            slowest <= RETRY_GOAL_S,
            `every key's retry served within ${RETRY_GOAL_S} s of the crash`,
          ),
          check('campaigns completed', completed, completed, 'within 180 s'),
          check('api started again', restarted, restarted, 'the killed api starts on its port'),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};
