import { randomBytes } from 'node:crypto';
import { median, runConcurrently } from '../../../bench/support/measure.js';
import { type Answer, call, createTenant } from '../support/api.js';
import { clearInbox, readInbox } from '../support/audit.js';
import {
  answerLabel,
  attackNumber,
  type LegitimateOutcome,
  legitimateNumber,
  rangeOf,
  refusalRule,
  signIn,
} from '../support/pumping.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { log, seconds, sleep, tally } from '../support/timing.js';

const ATTACK_SENDS = 2_000;
const ATTACKED_RANGES = 4;
const NUMBERS_PER_RANGE = 100;
/** As fast as 2 cores allow: the client never waits for a slot. */
const ATTACK_CONCURRENCY = 64;
const LEGITIMATE_USERS = 100;
/** The default breaker (domain/fraud-guard.ts GUARD_DEFAULTS: 20/1h@10%,1h). */
const BREAKER_VOLUME = 20;

/**
 * SMS pumping against a workspace whose guard is at its defaults (nothing configured), through one
 * API key that a customer's backend uses for every visitor. An attacker sends 2,000 OTP sends to
 * 400 numbers in 4 ranges (100 numbers each, 5 sends per number, the ranges in turn) at
 * concurrency 64 and never verifies; meanwhile 100 legitimate users, each alone in a range of
 * their own, send, read the code at the simulator's phone and verify it, one starting every 20
 * attack sends. Counted at the inbox: each attacked range may receive at most the breaker's
 * volume (20) plus what was in flight, taken as the attacker's concurrency (64); no legitimate
 * send may be refused.
 */
export const otpPumping: Scenario = {
  name: 'otp-pumping',
  short: false,
  async run(options) {
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      const apiUrl = stack.apiUrls[0] as string;
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, {
        name: 'Chaos pumping',
        credits: 2 * (ATTACK_SENDS + LEGITIMATE_USERS),
      });
      const tag = randomBytes(4).toString('hex');
      const ranges = Array.from({ length: ATTACKED_RANGES }, (_, r) => rangeOf(attackNumber(r, 0)));

      log(
        `${ATTACK_SENDS} attack sends at concurrency ${ATTACK_CONCURRENCY}, ${LEGITIMATE_USERS} sign-ins`,
      );
      const attack: { number: string; answer: Answer; atMs: number }[] = [];
      const signIns: Promise<LegitimateOutcome>[] = [];
      const started = performance.now();
      await runConcurrently(ATTACK_SENDS, ATTACK_CONCURRENCY, async (i) => {
        const every = ATTACK_SENDS / LEGITIMATE_USERS;
        if (i % every === 0) {
          const user = i / every;
          signIns.push(
            signIn(
              apiUrl,
              stack.simulatorUrl,
              tenant,
              legitimateNumber(user),
              `legit-${tag}-${user}`,
            ),
          );
        }
        // The ranges in turn, each number 5 times over the run: within the per-number limit.
        const slot = i % (ATTACKED_RANGES * NUMBERS_PER_RANGE);
        const number = attackNumber(slot % ATTACKED_RANGES, Math.floor(slot / ATTACKED_RANGES));
        const answer = await call(apiUrl, 'POST', '/api/v1/otp/send', {
          token: tenant.token,
          body: { recipient: number, purpose: 'login' },
        });
        attack.push({ number, answer, atMs: performance.now() - started });
      });
      const attackMs = performance.now() - started;
      log(`attack done in ${seconds(attackMs)} s; waiting for the sign-ins`);
      const legitimate = await Promise.all(signIns);
      const inbox = await settledInbox(stack, tenant.workspaceId, stack.simulatorUrl);
      const durationMs = performance.now() - started;

      const perRange = Object.fromEntries(
        ranges.map((range) => {
          const answers = attack.filter((send) => rangeOf(send.number) === range);
          const firstTrip = answers
            .filter((send) => refusalRule(send.answer) === 'range_breaker')
            .reduce((first, send) => Math.min(first, send.atMs), Number.POSITIVE_INFINITY);
          return [
            range,
            {
              codes_in_inbox: inbox.filter((message) => rangeOf(message.to) === range).length,
              answers: tally(answers.map((send) => answerLabel(send.answer))),
              first_range_breaker_refusal_s: Number.isFinite(firstTrip) ? seconds(firstTrip) : null,
            },
          ];
        }),
      );
      const database = await guardRecords(stack, tenant.workspaceId);
      const refused = legitimate.filter((user) => user.refused);
      const verified = legitimate.filter((user) => user.verified).length;
      const limit = BREAKER_VOLUME + ATTACK_CONCURRENCY;
      const worstRange = Math.max(...Object.values(perRange).map((range) => range.codes_in_inbox));
      const deaths = stack.deaths();
      return {
        figures: {
          attacked_ranges: perRange,
          attacker_answers: tally(attack.map((send) => answerLabel(send.answer))),
          attack_sends_per_s: Math.round(ATTACK_SENDS / (attackMs / 1000)),
          attack_s: seconds(attackMs),
          limit_per_range: {
            codes: limit,
            breaker_volume: BREAKER_VOLUME,
            in_flight: ATTACK_CONCURRENCY,
            in_flight_is:
              'the attacker concurrency: sends that may be in flight when the range trips',
          },
          legitimate: {
            users: legitimate.length,
            refused: refused.length,
            verified,
            send_answers: tally(legitimate.map((user) => user.sendAnswer)),
            retried_answers: tally(legitimate.flatMap((user) => user.retried)),
            users_retried: legitimate.filter((user) => user.retried.length > 0).length,
            sign_in_s: {
              median: seconds(median(legitimate.map((user) => user.ms))),
              max: seconds(Math.max(...legitimate.map((user) => user.ms))),
            },
            refusals: refused.map((user) => `${user.number}: ${user.sendAnswer}`),
            failures: legitimate.flatMap((user) =>
              user.failure ? [`${user.number}: ${user.failure}`] : [],
            ),
          },
          guard_refusals_counted: database.refusals,
          blocked_ranges: database.blocks,
          duration_s: seconds(durationMs),
          deaths,
        },
        checks: [
          check(
            'codes per attacked range',
            perRange,
            worstRange <= limit,
            `at most ${BREAKER_VOLUME} (the breaker's volume) + ${ATTACK_CONCURRENCY} in flight at each attacked range's phones`,
          ),
          check(
            'legitimate sends refused',
            refused.length,
            refused.length === 0,
            '0 refused (rate-limit 429s waited out, as the contract asks)',
          ),
          check(
            'legitimate users verified',
            verified,
            verified === LEGITIMATE_USERS,
            `all ${LEGITIMATE_USERS} read their code and verified it`,
          ),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};

/**
 * The inbox once the workspace has no OTP send in flight and the phones have received nothing
 * new for 3 s (at most 60 s).
 */
async function settledInbox(stack: ChaosStack, workspaceId: number, simulatorUrl: string) {
  const deadline = Date.now() + 60_000;
  let inbox = await readInbox(simulatorUrl);
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    await sleep(500);
    const next = await readInbox(simulatorUrl);
    if (next.length !== inbox.length) quietSince = Date.now();
    inbox = next;
    const pending = await stack.withSql(async (sql) => {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from otp_requests
        where workspace_id = ${workspaceId} and status = 'pending'`;
      return row?.n ?? 0;
    });
    if (pending === 0 && Date.now() - quietSince >= 3_000) break;
  }
  return inbox;
}

/** What the guard recorded: refusals by rule, and each range it blocked with the counts it saw. */
async function guardRecords(stack: ChaosStack, workspaceId: number) {
  return stack.withSql(async (sql) => {
    const refusals = await sql<{ rule: string; refusals: number }[]>`
      select rule, sum(refusals)::int as refusals from guard_refusals
      where workspace_id = ${workspaceId} group by rule order by rule`;
    const blocks = await sql<{ range: string; sends: number; verified: number }[]>`
      select range, sends, verified from guard_blocked_ranges
      where workspace_id = ${workspaceId} order by range, blocked_at`;
    return {
      refusals: Object.fromEntries(refusals.map((row) => [row.rule, row.refusals])),
      blocks: blocks.map((row) => ({ ...row })),
    };
  });
}
