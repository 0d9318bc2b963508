import { randomBytes } from 'node:crypto';
import { runHeraldJson } from '../../support/processes.js';
import { createTenant, recipients, sendUntilFinal } from '../support/api.js';
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

const KEYLESS = 10;
/** Keyed sends: the first half retried with their key once Temporal is back, the rest left be. */
const KEYED = 4;
const PER_SEND = 50;
const DOWN_MS = 60_000;
/** Each send this long after the previous one, the first this long after the kill. */
const SPREAD_MS = 3_000;
const SETTLE_MS = 120_000;
/** The campaign resumed by hand is sent this long before Temporal's return: no sweep has it. */
const RESUMED_SENT_BEFORE_RETURN_MS = 3_500;

/**
 * The Temporal dev server is killed (SIGKILL) for a minute; meanwhile 10 sends without an
 * Idempotency-Key and 4 with one are made, one every 3 s, and one more keyless 3.5 s before
 * Temporal returns, each answered 202 `paused`. Temporal is started again and no client
 * retries, except two keyed sends retried with their key (as the contract invites, racing
 * Herald's own dispatch); `herald campaign resume` is run at once on the last keyless campaign
 * (the worker, whose sweep would race it, held still meanwhile). Herald must dispatch every
 * paused campaign by itself, exactly once: every campaign completed within 120 s of Temporal's
 * return, each recipient one SMS.
 */
export const keylessTemporalDown: Scenario = {
  name: 'keyless-temporal-down',
  short: false,
  async run(options) {
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, { name: 'Chaos paused', credits: 100 });
      const secretPaths = await visitSecretPaths(stack, tenant);
      const tag = randomBytes(4).toString('hex');
      const sends: LogicalSend[] = Array.from({ length: KEYLESS + KEYED + 1 }, (_, i) => {
        const keyed = i >= KEYLESS && i < KEYLESS + KEYED;
        const key = keyed ? `chaos-paused-${tag}-${i}` : undefined;
        return {
          label: keyed ? `keyed ${i}` : i < KEYLESS ? `keyless ${i}` : `keyless ${i}, resumed`,
          key,
          request: {
            recipients: recipients(`+6146${String(i).padStart(2, '0')}`, PER_SEND),
            message: `Chaos paused ${tag}-${i}: your parcel is on its way.`,
            ...(key ? { reference: key } : {}),
          },
        };
      });
      const keyed = sends.filter((send) => send.key);
      const resumedSend = sends.at(-1) as LogicalSend;
      // The keyed sends among the keyless ones in time, one after every few keyless.
      const order = sends
        .slice(0, KEYLESS)
        .flatMap((send, i) =>
          i % Math.ceil(KEYLESS / KEYED) === 1 ? [send, keyed[Math.floor(i / 3)]] : [send],
        )
        .filter((send): send is LogicalSend => send !== undefined);
      for (const send of keyed) if (!order.includes(send)) order.push(send);

      await stack.killTemporal();
      const downAt = Date.now();
      log('Temporal killed');
      const running: Promise<SendOutcome>[] = [];
      const answered = new Map<LogicalSend, SendOutcome>();
      for (const send of order) {
        await sleep(SPREAD_MS);
        running.push(
          sendAsInvited(stack.apiUrls, tenant, send).then((outcome) => {
            answered.set(send, outcome);
            return outcome;
          }),
        );
      }
      await sleep(DOWN_MS - RESUMED_SENT_BEFORE_RETURN_MS - (Date.now() - downAt));
      const toResume = sendAsInvited(stack.apiUrls, tenant, resumedSend);
      running.push(toResume);
      answered.set(resumedSend, await toResume);
      await sleep(DOWN_MS - (Date.now() - downAt));
      // The worker, and with it the sweep of paused campaigns, is held still while the operator
      // resumes one: on a busy machine the sweep comes round before node has loaded the command.
      stack.freeze('worker-0');
      await stack.startTemporal();
      const backAt = Date.now();
      log(`Temporal back after ${seconds(backAt - downAt)} s`);
      const target = answered.get(resumedSend);
      const resume =
        target?.end === 'paused'
          ? await runHeraldJson(
              ['campaign', 'resume', '--workspace', tenant.slug, '--id', String(target.campaignId)],
              stack.env(),
            ).then(
              (result) => ({
                code: result.code,
                json: result.json,
                stderr: result.stderr.slice(-500),
              }),
              (error: Error) => ({ code: null, json: null, stderr: error.message.slice(-500) }),
            )
          : undefined;
      stack.thaw('worker-0');
      const resumeSeconds = seconds(Date.now() - backAt);

      const outcomes = await Promise.all(running);
      const retried = keyed.slice(0, KEYED / 2);
      const retries = retried.map((send) =>
        sendUntilFinal(stack.apiUrls, tenant, send.request, send.key as string, {
          deadlineMs: SETTLE_MS,
        }).then(
          ({ answers }) => answers.map((answer) => answer.status),
          (error: Error) => [`error: ${error.message}`],
        ),
      );
      const settledMs = await untilWorkspaceCompleted(stack, tenant.workspaceId, SETTLE_MS);
      const completedAt = Date.now();
      const retryAnswers = await Promise.all(retries);
      await sleep(2_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const received = inboxBySend(inbox, sends);
      const campaigns = await workspaceCampaigns(stack, tenant.workspaceId, sends);
      const answers = answerFigures(outcomes);
      const paused = outcomes.filter((outcome) => outcome.end === 'paused');
      const leftToHerald = [...answered]
        .filter(([send, outcome]) => !retried.includes(send) && outcome.end === 'paused')
        .map(([, outcome]) => outcome.campaignId as number);
      const notDispatched = campaigns.open.filter((open) => leftToHerald.includes(open.id));
      const resumeStatus = (resume?.json as { status?: string } | null)?.status;
      const resumedOk = resume?.code === 0 && resumeStatus === 'queued';
      const deaths = stack.deaths();
      return {
        figures: {
          lost: received.lost,
          duplicated: received.duplicated,
          sends: sends.length,
          keyed: KEYED,
          recipients: received.recipients,
          down_s: seconds(backAt - downAt),
          ...answers,
          campaigns: campaigns.campaigns,
          campaigns_by_status: campaigns.by_status,
          sends_with_several_campaigns: campaigns.sends_with_several,
          paused: paused.length,
          left_to_herald: leftToHerald.length,
          completed_after_return_s: settledMs === null ? null : seconds(completedAt - backAt),
          resume: resume ? { ...resume, seconds: resumeSeconds } : null,
          keyed_retry_answers: retryAnswers,
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
            'answered paused',
            answers.ends,
            paused.length === sends.length,
            'every send made while Temporal is down answered 202 paused',
          ),
          check(
            'stuck',
            { open: campaigns.open.length, by_status: campaigns.by_status },
            settledMs !== null,
            `every campaign completed within ${SETTLE_MS / 1000} s of Temporal's return`,
          ),
          check(
            'paused dispatched by Herald',
            { left_to_herald: leftToHerald.length, not_completed: notDispatched.length },
            leftToHerald.length > 0 && notDispatched.length === 0,
            'every paused campaign no client retried completed',
          ),
          check(
            'campaign resume',
            resume ? { code: resume.code, status: resumeStatus ?? null } : null,
            resumedOk,
            '`herald campaign resume` on a paused keyless campaign: exit 0, queued',
          ),
          check(
            'one campaign per send',
            { campaigns: campaigns.campaigns, several: campaigns.sends_with_several },
            campaigns.campaigns === sends.length && campaigns.sends_with_several === 0,
            `${sends.length} campaigns for ${sends.length} sends`,
          ),
          check('500 answers', answers.status_500, answers.status_500 === 0, '0 × 500'),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};
