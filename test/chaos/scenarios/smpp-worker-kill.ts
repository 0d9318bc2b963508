import { startSmscPeer } from '../../support/smsc-peer.js';
import { campaignView, createTenant, recipients } from '../support/api.js';
import { apiCounters, type SentCampaign, sendCampaign, sumCounters } from '../support/campaign.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep, tally, waitUntil } from '../support/timing.js';

const ACCOUNT = { systemId: 'herald-chaos', password: 'Ch4os-9x' };
const PROVIDER = 'smsc';
/** Submissions awaiting their answer at once: the most a kill may leave unknown. */
const WINDOW = 10;
const MESSAGES_PER_SECOND = 500;
/** Each submit_sm answered this late: a few PDUs are in flight whenever the worker dies. */
const ANSWER_DELAY_MS = 5;
/** The share of the recipients at the SMSC when the worker is killed. */
const KILL_AT = 0.3;
/**
 * Then up to this much longer, at random: the window moves in bursts (claimed together, written
 * together, answered together), and the moment the share is reached is always the end of one.
 */
const KILL_JITTER_MS = 50;
/** The most recipients one send takes (domain/send-request.ts). */
const PER_CAMPAIGN = 1000;
/** How Herald's error for a message failed as outcome unknown begins. */
const UNKNOWN = 'outcome unknown';

interface Row {
  campaign_id: number;
  seq: number;
  recipient: string;
  status: string;
  error: string | null;
}

/** Messages claimed and not settled when the worker died, by whether their write mark committed. */
interface ClaimsAtKill {
  mark_committed: number;
  no_mark: number;
  /** Recipients claimed without a committed mark: the successor must send them, not fail them. */
  unwritten: string[];
}

/**
 * `kill -9` of the worker while campaigns stream through an SMPP bind (window 10, 500 msg/s, the
 * SMSC answering each submit_sm 5 ms late) to the SMSC peer of test/support/smsc-peer.ts, run in
 * this process: once 30 % of the recipients are at the SMSC, the worker dies and a new one starts.
 * Counted at the SMSC: no recipient gets it twice, at most the window is failed as outcome unknown
 * and each of those reached the SMSC (its PDU was read: a claim whose write mark never committed
 * is the successor's to send), every other recipient is `sent` and at the SMSC once. 3,000
 * recipients in 3 sends of 1,000 made at once (short: one of 600).
 */
export const smppWorkerKill: Scenario = {
  name: 'smpp-worker-kill',
  short: true,
  async run(options) {
    const size = options.short ? 600 : 3000;
    const peer = await startSmscPeer(ACCOUNT);
    peer.responseDelayMs = ANSWER_DELAY_MS;
    const stack = await ChaosStack.start({ apis: 1, workers: 1 }).catch(async (error) => {
      await peer.close();
      throw error;
    });
    try {
      const tenant = await createTenant(stack, {
        name: 'Chaos SMPP worker',
        providers: [
          {
            slug: PROVIDER,
            messagesPerSecond: MESSAGES_PER_SECOND,
            smpp: { host: peer.host, port: peer.port, ...ACCOUNT, window: WINDOW },
          },
        ],
      });
      const started = Date.now();
      const campaigns: SentCampaign[] = await Promise.all(
        Array.from({ length: Math.ceil(size / PER_CAMPAIGN) }, (_, index) =>
          sendCampaign(stack, tenant, {
            label: `smpp-kill-${index + 1}`,
            recipients: recipients(
              '+61413',
              Math.min(PER_CAMPAIGN, size - index * PER_CAMPAIGN),
              index * PER_CAMPAIGN,
            ),
            provider: PROVIDER,
          }),
        ),
      );
      const ids = campaigns.map((campaign) => campaign.id);
      const bodies = new Set(campaigns.map((campaign) => campaign.body));
      const atSmsc = () => peer.messages.filter((message) => bodies.has(message.text));

      await waitUntil(
        `${KILL_AT * 100} % of the recipients at the SMSC`,
        async () => (atSmsc().length >= size * KILL_AT ? true : undefined),
        120_000,
        5,
      );
      const jitterMs = Math.round(Math.random() * KILL_JITTER_MS);
      await sleep(jitterMs);
      const arrivedAtKill = atSmsc().length;
      const killing = Date.now();
      await stack.kill('worker-0');
      const killedAt = Date.now();
      // Every connection so far was the dead worker's: the successor binds anew.
      const deadWorkerConnections = peer.connections;
      log(`killed worker-0 with ${arrivedAtKill} messages at the SMSC`);
      const views = await Promise.all(
        ids.map((id) => campaignView(stack.apiUrls[0] as string, tenant, id)),
      );
      const claimsAtKill = await claimedUnsettled(stack, ids);
      await stack.startWorker(0);

      const completed = await waitUntil(
        'the campaigns completed',
        () =>
          stack.withSql(async (sql) => {
            const [row] = await sql<{ open: number }[]>`
              select count(*)::int as open from campaigns
              where id = any(${ids}::bigint[]) and status <> 'completed'`;
            return row?.open === 0 ? true : undefined;
          }),
        180_000,
        250,
      ).catch(() => false);
      const completedAt = Date.now();
      // Late answers and receipts settle; nothing more may reach the SMSC.
      await sleep(1_000);

      const rows = await stack.withSql(
        (sql) => sql<Row[]>`
          select campaign_id::int as campaign_id, seq, recipient, status, error
          from campaign_messages where campaign_id = any(${ids}::bigint[])
          order by campaign_id, seq`,
      );
      // Every recipient is in one campaign only: counted by number.
      const kept = new Map<string, number>();
      for (const message of atSmsc()) kept.set(message.to, (kept.get(message.to) ?? 0) + 1);
      // Read by the SMSC, but the worker died before its answer went out: it reached the SMSC.
      const unanswered = new Map<string, number>();
      for (const part of peer.unanswered)
        if (bodies.has(part.text))
          unanswered.set(`+${part.to}`, (unanswered.get(`+${part.to}`) ?? 0) + 1);
      const reached = (recipient: string) =>
        (kept.get(recipient) ?? 0) + (unanswered.get(recipient) ?? 0);

      const isUnknown = (row: Row) =>
        row.status === 'failed' && (row.error ?? '').startsWith(UNKNOWN);
      const unknown = rows.filter(isUnknown);
      const unknownNeverReached = unknown.filter((row) => reached(row.recipient) === 0);
      const twice = rows.filter((row) => reached(row.recipient) > 1);
      const notOnce = rows.filter(
        (row) =>
          !isUnknown(row) &&
          !(row.status === 'sent' && kept.get(row.recipient) === 1 && reached(row.recipient) === 1),
      );
      const unwrittenAtKill = new Set(claimsAtKill.unwritten);
      const claimedWithoutMark = rows.filter((row) => unwrittenAtKill.has(row.recipient));
      const resent = claimedWithoutMark.filter(
        (row) => row.status === 'sent' && reached(row.recipient) === 1,
      );
      const counters = await Promise.all(
        campaigns.map((campaign) => apiCounters(stack, tenant, campaign)),
      );
      // Answered by the SMSC after the SIGKILL, on the dead worker's bind: the answer went nowhere.
      const answeredAfterKill = atSmsc().filter(
        (message) =>
          message.connection <= deadWorkerConnections && message.submittedAt.getTime() >= killing,
      ).length;
      const successorArrivals = atSmsc()
        .filter((message) => message.connection > deadWorkerConnections)
        .map((message) => message.submittedAt.getTime());
      const deaths = stack.deaths();
      const describe = (row: Row) => ({
        ...row,
        kept_at_smsc: kept.get(row.recipient) ?? 0,
        read_unanswered: unanswered.get(row.recipient) ?? 0,
        claimed_at_kill_without_mark: unwrittenAtKill.has(row.recipient),
      });
      const statusesAtKill = views.map((view) => view?.status ?? null);
      return {
        figures: {
          recipients: size,
          campaigns: campaigns.length,
          window: WINDOW,
          messages_per_second: MESSAGES_PER_SECOND,
          answer_delay_ms: ANSWER_DELAY_MS,
          at_kill: {
            at_smsc: arrivedAtKill,
            jitter_ms: jitterMs,
            campaign_statuses: statusesAtKill,
            sent_count: views.reduce((sum, view) => sum + (view?.sent_count ?? 0), 0),
            claimed_unsettled: claimsAtKill.mark_committed + claimsAtKill.no_mark,
            claimed_mark_committed: claimsAtKill.mark_committed,
            claimed_no_mark: claimsAtKill.no_mark,
            // PDUs the SMSC had read and not answered when the worker died: answered into the
            // dead connection, or not at all (the connection gone first).
            in_flight_at_smsc: answeredAfterKill + peer.unanswered.length,
            answered_after_kill: answeredAfterKill,
          },
          unknown: unknown.length,
          unknown_kept_at_smsc: unknown.filter((row) => kept.has(row.recipient)).length,
          unknown_read_unanswered: unknown.filter((row) => unanswered.has(row.recipient)).length,
          unknown_never_reached: unknownNeverReached.length,
          claims_without_mark_sent_once: resent.length,
          received_twice: twice.length,
          not_sent_once: notOnce.length,
          statuses: tally(rows.map((row) => row.status)),
          failed_errors: tally(rows.filter((row) => row.error).map((row) => row.error as string)),
          ...sumCounters(counters),
          smsc: {
            parts: peer.parts.length,
            messages: peer.messages.length,
            unanswered: peer.unanswered.length,
            max_outstanding: peer.maxOutstanding,
            connections: peer.connections,
            answered: peer.answered,
            problems: peer.problems.slice(0, 10),
          },
          // From the kill to the successor's first message at the SMSC.
          time_to_recover_s:
            successorArrivals.length > 0
              ? seconds(Math.min(...successorArrivals) - killedAt)
              : null,
          completed_after_s: completed ? seconds(completedAt - killedAt) : null,
          seconds_sending: seconds(completedAt - started),
          unknown_rows: unknown.map(describe),
          claimed_without_mark_rows: claimedWithoutMark.map(describe),
          examples: {
            never_reached: unknownNeverReached.slice(0, 10).map(describe),
            twice: twice.slice(0, 10).map(describe),
            not_sent_once: notOnce.slice(0, 10).map(describe),
          },
          deaths,
        },
        checks: [
          check('received twice', twice.length, twice.length === 0, '0 recipients with 2+ copies'),
          check(
            'unknown within the window',
            unknown.length,
            unknown.length <= WINDOW,
            `at most ${WINDOW} (the window) failed as outcome unknown`,
          ),
          check(
            'unknown never reached the SMSC',
            unknownNeverReached.length,
            unknownNeverReached.length === 0,
            '0 failed as outcome unknown whose PDU the SMSC never read',
          ),
          check(
            'no message lost',
            notOnce.length,
            notOnce.length === 0,
            'every recipient not failed as unknown is sent and at the SMSC exactly once',
          ),
          check(
            'campaigns completed',
            counters,
            completed &&
              rows.length === size &&
              counters.every(
                (c) => c !== undefined && c.status === 'completed' && c.sent + c.failed === c.total,
              ),
            'completed within 180 s of the kill, each sent + failed = total',
          ),
          check('SMSC problems', peer.problems.length, peer.problems.length === 0, '0 problems'),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
          check(
            'kill landed mid-send',
            { statuses: statusesAtKill, at_smsc: arrivedAtKill },
            statusesAtKill.includes('queued') && arrivedAtKill < size,
            'a campaign queued and not every recipient at the SMSC when the worker died',
          ),
        ],
      };
    } finally {
      await stack.close(options.keep);
      await peer.close();
    }
  },
};

async function claimedUnsettled(stack: ChaosStack, ids: number[]): Promise<ClaimsAtKill> {
  const rows = await stack.withSql(
    (sql) => sql<{ recipient: string; marked: boolean }[]>`
      select m.recipient,
        exists (select 1 from submission_writes w where w.batch = m.attempt_batch) as marked
      from campaign_messages m
      where m.campaign_id = any(${ids}::bigint[]) and m.status = 'queued'
        and m.attempt_provider is not null`,
  );
  const unwritten = rows.filter((row) => !row.marked).map((row) => row.recipient);
  return { mark_committed: rows.length - unwritten.length, no_mark: unwritten.length, unwritten };
}
