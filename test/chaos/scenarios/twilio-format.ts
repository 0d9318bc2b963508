import { randomBytes } from 'node:crypto';
import { type PeerAnswer, startTwilioPeer } from '../../support/twilio-peer.js';
import { createTenant, recipients } from '../support/api.js';
import { auditCampaigns, clearInbox, readInbox } from '../support/audit.js';
import { apiCounters, sendCampaign, untilAllCompleted } from '../support/campaign.js';
import { type Check, check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { seconds, sleep } from '../support/timing.js';

const RETRY_AFTER_S = 3;
const PER_GROUP = 5;

interface Group {
  name: string;
  prefix: string;
  /** The peer's answers to each create for these numbers, in order; then `standing`. */
  next?: PeerAnswer[];
  standing?: PeerAnswer;
}

/** A 5xx after Twilio created the message, as an edge or a timeout inside Twilio may answer. */
const createdThen = (status: number, code: number, message: string): PeerAnswer => ({
  kind: 'error',
  status,
  code,
  message,
  created: true,
});

const GROUPS: Group[] = [
  { name: '500', prefix: '+614810', standing: createdThen(500, 20500, 'Internal Server Error') },
  { name: '502', prefix: '+614820', standing: createdThen(502, 20502, 'Bad Gateway') },
  { name: '503', prefix: '+614825', standing: createdThen(503, 20503, 'Service Unavailable') },
  { name: '504', prefix: '+614830', standing: createdThen(504, 20504, 'Gateway Timeout') },
  {
    name: '21610',
    prefix: '+614840',
    standing: {
      kind: 'error',
      status: 400,
      code: 21610,
      message: 'Attempt to send to unsubscribed recipient',
    },
  },
  {
    name: '429',
    prefix: '+614850',
    next: [
      {
        kind: 'error',
        status: 429,
        code: 20429,
        message: 'Too Many Requests',
        retryAfter: String(RETRY_AFTER_S),
      },
    ],
  },
  { name: 'healthy', prefix: '+614860' },
];

/**
 * A campaign over a failover route (Twilio, then a simulator) against a Twilio-format server
 * that answers 500/502/503/504 after creating the message, 21610 (the recipient texted STOP),
 * or 429 with Retry-After once. Counts create requests per message at the Twilio peer and
 * copies at the simulator's inbox (a failover).
 */
export const twilioFormat: Scenario = {
  name: 'twilio-format',
  // The same edges are held by the integration tests against this peer.
  short: false,
  async run(options) {
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    const account = {
      accountSid: `AC${randomBytes(16).toString('hex')}`,
      authToken: randomBytes(16).toString('hex'),
    };
    const peer = await startTwilioPeer(account);
    try {
      await clearInbox(stack.simulatorUrl);
      const tenant = await createTenant(stack, {
        name: 'Chaos twilio',
        providers: [{ slug: 'backup' }],
      });
      await stack.admin([
        'provider',
        'create',
        '--workspace',
        tenant.slug,
        '--slug',
        'twilio',
        '--type',
        'twilio',
        '--account-sid',
        account.accountSid,
        '--auth-token',
        account.authToken,
        '--from',
        '+15005550006',
        '--base-url',
        peer.url,
      ]);
      await stack.admin([
        'route',
        'create',
        '--workspace',
        tenant.slug,
        '--slug',
        'main',
        '--providers',
        'twilio,backup',
      ]);
      const numbers = new Map(
        GROUPS.map((group) => [group.name, recipients(group.prefix, PER_GROUP)]),
      );
      for (const group of GROUPS) {
        for (const to of numbers.get(group.name) ?? []) {
          if (group.standing) peer.answer(to, group.standing);
          if (group.next) peer.answerNext(to, ...group.next);
        }
      }
      const started = Date.now();
      const campaign = await sendCampaign(stack, tenant, {
        label: 'twilio',
        route: 'main',
        recipients: [...numbers.values()].flat(),
      });
      const completed = await untilAllCompleted(stack, [campaign.id], 180_000);
      const completedAt = Date.now();
      await sleep(1_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const { rows, optOuts } = await stack.withSql(async (sql) => ({
        rows: await sql<{ recipient: string; status: string; error: string | null }[]>`
          select recipient, status, error from campaign_messages where campaign_id = ${campaign.id}`,
        optOuts: (
          await sql<{ recipient: string }[]>`
            select recipient from opt_outs where workspace_id = ${tenant.workspaceId}`
        ).map((row) => row.recipient),
      }));
      const groups = GROUPS.map((group) => {
        const to = numbers.get(group.name) ?? [];
        const creates = to.map((number) => peer.createsTo(number).length);
        const copies = to.map(
          (number) =>
            peer.messages.filter((message) => message.to === number).length +
            inbox.filter((message) => message.to === number && message.body === campaign.body)
              .length,
        );
        const gaps = to.flatMap((number) => {
          const [first, second] = peer.createsTo(number);
          return first && second ? [second.at - first.at] : [];
        });
        const mine = rows.filter((row) => to.includes(row.recipient));
        return {
          group: group.name,
          recipients: to.length,
          creates_max: Math.max(...creates),
          creates_total: creates.reduce((a, b) => a + b, 0),
          failed_over: inbox.filter(
            (message) => to.includes(message.to) && message.body === campaign.body,
          ).length,
          duplicated: copies.filter((n) => n > 1).length,
          lost: mine.filter(
            (row) => row.status === 'sent' && copies[to.indexOf(row.recipient)] === 0,
          ).length,
          sent: mine.filter((row) => row.status === 'sent').length,
          failed: mine.filter((row) => row.status === 'failed').length,
          opted_out: to.filter((number) => optOuts.includes(number)).length,
          min_gap_after_first_create_s: gaps.length > 0 ? seconds(Math.min(...gaps)) : null,
          errors: [...new Set(mine.map((row) => row.error).filter(Boolean))].slice(0, 2),
        };
      });
      const byName = (name: string) => groups.find((group) => group.group === name);
      const counters = await apiCounters(stack, tenant, campaign);
      const { orphans } = await auditCampaigns(stack, tenant.workspaceId, inbox);
      const deaths = stack.deaths();
      const checks: Check[] = [
        check(
          'duplicated',
          groups.reduce((n, group) => n + group.duplicated, 0),
          groups.every((group) => group.duplicated === 0),
          '0 recipients with 2+ copies (Twilio creates + simulator inbox)',
        ),
        check(
          'lost',
          groups.reduce((n, group) => n + group.lost, 0),
          groups.every((group) => group.lost === 0),
          '0 sent but never created',
        ),
        ...['500', '502', '504'].map((name) =>
          check(
            `${name} on create`,
            { creates_max: byName(name)?.creates_max, failed_over: byName(name)?.failed_over },
            byName(name)?.creates_max === 1 && byName(name)?.failed_over === 0,
            'never a second create, never failed over',
          ),
        ),
        check(
          '21610',
          byName('21610'),
          byName('21610')?.creates_max === 1 &&
            byName('21610')?.failed_over === 0 &&
            byName('21610')?.opted_out === PER_GROUP,
          'an opt-out recorded, not failed over',
        ),
        check(
          '429 Retry-After',
          byName('429')?.min_gap_after_first_create_s,
          (byName('429')?.min_gap_after_first_create_s ?? 0) >= RETRY_AFTER_S - 0.1 &&
            byName('429')?.sent === PER_GROUP,
          `the next create ≥ ${RETRY_AFTER_S} s later, then sent`,
        ),
        check(
          'counters add up',
          counters,
          counters?.status === 'completed' && counters.sent + counters.failed === counters.total,
          'completed, sent + failed = total',
        ),
        check('campaign completed', completed, completed, 'within 180 s'),
        check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
      ];
      return {
        figures: {
          lost: groups.reduce((n, group) => n + group.lost, 0),
          duplicated: groups.reduce((n, group) => n + group.duplicated, 0),
          sent: counters?.sent ?? null,
          failed: counters?.failed ?? null,
          total: counters?.total ?? null,
          orphans,
          groups,
          peer_problems: peer.problems.slice(0, 5),
          seconds_sending: seconds(completedAt - started),
          deaths,
        },
        checks,
      };
    } finally {
      await peer.close();
      await stack.close(options.keep);
    }
  },
};
