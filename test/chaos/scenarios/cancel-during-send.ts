import { type Answer, call, campaignView, createTenant } from '../support/api.js';
import { auditCampaigns, clearInbox, readInbox } from '../support/audit.js';
import { sendCampaign, untilArrived } from '../support/campaign.js';
import { arrivalsOf, campaignRunStatus, messageStatuses } from '../support/lifecycle.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep, waitUntil } from '../support/timing.js';

const TOTAL = 1000;
/** Paced so that the campaign takes about 20 s. */
const MESSAGES_PER_SECOND = 50;
const CANCEL_AT_ARRIVALS = 200;
/** What the cancel answer documents: one batch of 50 in each of a campaign's 4 lanes. */
const MOST_CLAIMED = 200;
/** For the kill "after": the cancel request is on its way, its transaction about to commit. */
const KILL_AFTER_SENDING_MS = 20;

type Kill = 'none' | 'before the cancel' | 'after sending the cancel';

/** Runs 1, 5, 9…: kill before; 3, 7…: kill just after sending; even runs: no kill. */
function killFor(run: number): Kill {
  if (run % 2 === 0) return 'none';
  return run % 4 === 1 ? 'before the cancel' : 'after sending the cancel';
}

/**
 * A 1,000-recipient campaign through a workspace simulator provider paced at 50 messages/s,
 * canceled with POST /api/v1/messages/{id}/cancel once 200 are at the inbox. After the 200
 * answer at most its `queued_count` (the messages already claimed by a submission) may still
 * reach the inbox; every other message is canceled, and once settled sent + failed + canceled =
 * total, the inbox holds exactly the sent ones, each once. In odd runs the worker is killed
 * (`kill -9`) at the cancel, just before it or just after sending it, and started again.
 */
export const cancelDuringSend: Scenario = {
  name: 'cancel-during-send',
  short: false,
  async run(options) {
    const kill = killFor(options.run);
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, {
        name: 'Chaos cancel',
        providers: [{ slug: 'paced', messagesPerSecond: MESSAGES_PER_SECOND }],
      });
      const api = stack.apiUrls[0] as string;
      const campaign = await sendCampaign(stack, tenant, {
        label: 'cancel',
        prefix: '+61415',
        count: TOTAL,
        provider: 'paced',
      });
      const cancel = () =>
        call(api, 'POST', `/api/v1/messages/${campaign.id}/cancel`, {
          token: tenant.token,
          timeoutMs: 30_000,
        });

      await untilArrived(stack, campaign, CANCEL_AT_ARRIVALS);
      if (kill === 'before the cancel') await stack.kill('worker-0');
      const requestedAt = Date.now();
      const answering = cancel();
      if (kill === 'after sending the cancel') {
        await sleep(KILL_AFTER_SENDING_MS);
        await stack.kill('worker-0');
      }
      const answer: Answer = await answering;
      const answeredAt = Date.now();
      const atAnswer = answer.status === 200 ? answer.body.data.message : undefined;
      log(
        `canceled (${kill === 'none' ? 'no kill' : `worker killed ${kill}`}): ${answer.status}, ` +
          `${atAnswer?.queued_count} claimed, ${atAnswer?.sent_count} sent`,
      );
      let workerBackS: number | null = null;
      if (kill !== 'none') {
        await stack.startWorker(0);
        workerBackS = seconds(Date.now() - answeredAt);
      }

      // Settled: nothing queued, and no new message at the inbox for 3 s after that.
      const settled = await waitUntil(
        `campaign ${campaign.id} to settle`,
        async () => {
          const view = await campaignView(api, tenant, campaign.id);
          return view && view.queued_count === 0 ? view : undefined;
        },
        120_000,
        250,
      ).catch(() => undefined);
      const settledAt = Date.now();
      await sleep(3_000);
      const again = await cancel();
      const runStatus = await waitUntil(
        'the campaign run to close',
        async () => {
          const status = await campaignRunStatus(stack, campaign.id);
          return status && status !== 'RUNNING' ? status : undefined;
        },
        60_000,
        500,
      ).catch(async () => campaignRunStatus(stack, campaign.id));

      const final = await campaignView(api, tenant, campaign.id);
      const inbox = await readInbox(stack.simulatorUrl);
      const arrivals = arrivalsOf(inbox, campaign).map((m) => Date.parse(m.received_at));
      const inboxAtAnswer = arrivals.filter((at) => at <= answeredAt).length;
      const reachedAfterAnswer = arrivals.length - inboxAtAnswer;
      const reachedAfterRequest = arrivals.filter((at) => at > requestedAt).length;
      const audit = await auditCampaigns(stack, tenant.workspaceId, inbox);
      const rows = await messageStatuses(stack, campaign.id);
      const deaths = stack.deaths();
      const claimed = atAnswer?.queued_count ?? null;
      const counts = (view: typeof final) =>
        view && view.sent_count + view.failed_count + view.canceled_count + view.queued_count;
      return {
        figures: {
          kill,
          inbox_at_answer: inboxAtAnswer,
          claimed_at_answer: claimed,
          sent_at_answer: atAnswer?.sent_count ?? null,
          reached_after_answer: reachedAfterAnswer,
          reached_after_request: reachedAfterRequest,
          canceled: final?.canceled_count ?? null,
          sent: final?.sent_count ?? null,
          failed: final?.failed_count ?? null,
          total: final?.total_recipients ?? null,
          received: arrivals.length,
          cancel_answer_ms: Math.round(answer.ms),
          worker_back_s: workerBackS,
          settled_s_after_answer: settled ? seconds(settledAt - answeredAt) : null,
          message_rows: rows,
          run_status: runStatus,
          at_answer: atAnswer ?? answer.body,
          workspace: audit,
          deaths,
        },
        checks: [
          check(
            'cancel answered',
            { status: answer.status, campaign_status: atAnswer?.status ?? null },
            answer.status === 200 && atAnswer?.status === 'canceled' && !!atAnswer?.completed_at,
            '200, status canceled, completed_at set',
          ),
          check(
            'cancel landed mid-campaign',
            atAnswer?.canceled_count ?? null,
            (atAnswer?.canceled_count ?? 0) > 0,
            'messages left to cancel at the answer (else the run did not test it)',
          ),
          check(
            'claimed at the answer',
            claimed,
            claimed !== null && claimed <= MOST_CLAIMED,
            `queued_count of the answer ≤ ${MOST_CLAIMED} (a batch of 50 in each of 4 lanes)`,
          ),
          check(
            'answer adds up',
            counts(atAnswer),
            counts(atAnswer) === TOTAL,
            'sent + failed + canceled + queued = total in the answer',
          ),
          check(
            'reached after the answer',
            { reached: reachedAfterAnswer, claimed },
            claimed !== null && reachedAfterAnswer <= claimed,
            'at most queued_count of the answer reach the inbox after it',
          ),
          check(
            'settled',
            final && {
              status: final.status,
              queued: final.queued_count,
              sent: final.sent_count,
              failed: final.failed_count,
              canceled: final.canceled_count,
            },
            !!settled &&
              final?.status === 'canceled' &&
              final.queued_count === 0 &&
              final.sent_count + final.failed_count + final.canceled_count === TOTAL &&
              final.completed_at === atAnswer?.completed_at,
            'canceled, queued 0, sent + failed + canceled = total, completed_at of the cancel',
          ),
          check(
            'the rest canceled',
            final && atAnswer && { sent: final.sent_count, at_most: atAnswer.sent_count + claimed },
            !!final && !!atAnswer && final.sent_count <= atAnswer.sent_count + (claimed ?? 0),
            'sent at the end ≤ sent + claimed at the answer',
          ),
          check(
            'inbox = sent',
            { received: arrivals.length, sent: final?.sent_count ?? null },
            arrivals.length === final?.sent_count,
            'the inbox holds as many of its messages as are sent',
          ),
          check(
            'duplicated',
            audit.duplicated,
            audit.duplicated === 0,
            '0 recipients with 2+ copies',
          ),
          check('lost', audit.lost, audit.lost === 0, '0 recipients sent but not received'),
          check(
            'canceled but received',
            audit.canceled_but_received,
            audit.canceled_but_received === 0,
            'no canceled message reached the inbox',
          ),
          check(
            'second cancel',
            { status: again.status, campaign_status: again.body?.data?.message?.status ?? null },
            again.status === 200 && again.body?.data?.message?.status === 'canceled',
            'a second cancel answers 200, canceled',
          ),
          check('run closed', runStatus, runStatus === 'COMPLETED', "the campaign's run completed"),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};
