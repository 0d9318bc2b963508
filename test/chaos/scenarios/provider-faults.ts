import { createTenant } from '../support/api.js';
import { auditCampaigns, clearInbox, readInbox, setBehaviour } from '../support/audit.js';
import {
  apiCounters,
  exactlyOnceChecks,
  sendCampaign,
  untilAllCompleted,
} from '../support/campaign.js';
import { check, type Scenario } from '../support/scenario.js';
import { ChaosStack } from '../support/stack.js';
import { seconds, sleep } from '../support/timing.js';

/** Recipient groups by prefix, each with the simulator's rule for it. */
const GROUPS = [
  // Accepted and stored, but the 202 is held past the adapter's 10 s submit timeout.
  {
    name: 'timeout',
    prefix: '+614510',
    count: 30,
    rule: { outcome: 'timeout', timeout_ms: 12_000 },
  },
  { name: 'failing 30 %', prefix: '+614520', count: 100, rule: { failure_rate: 0.3 } },
  { name: 'rejected', prefix: '+614550', count: 30, rule: { outcome: 'reject' } },
  { name: 'healthy', prefix: '+614540', count: 100, rule: {} },
] as const;

/**
 * Provider faults during one campaign through a workspace simulator provider: submissions whose
 * answer never comes (the message was taken), 30 % retryable failures, and rejections. Every
 * recipient must get the message at most once, rejected ones never, and the counters add up.
 */
export const providerFaults: Scenario = {
  name: 'provider-faults',
  short: true,
  async run(options) {
    const stack = await ChaosStack.start({ apis: 1, workers: 1 });
    try {
      await clearInbox(stack.simulatorUrl);
      for (const group of GROUPS)
        await setBehaviour(stack.simulatorUrl, { prefix: group.prefix, ...group.rule });
      const tenant = await createTenant(stack, {
        name: 'Chaos provider',
        providers: [{ slug: 'carrier' }],
      });
      const started = Date.now();
      const campaign = await sendCampaign(stack, tenant, {
        label: 'provider',
        provider: 'carrier',
        recipients: GROUPS.flatMap((group) =>
          Array.from(
            { length: group.count },
            (_, i) => `${group.prefix}${String(i).padStart(5, '0')}`,
          ),
        ),
      });
      const completed = await untilAllCompleted(stack, [campaign.id], 180_000);
      const completedAt = Date.now();
      await sleep(1_000);

      const inbox = await readInbox(stack.simulatorUrl);
      const audit = await auditCampaigns(stack, tenant.workspaceId, inbox);
      const counters = await apiCounters(stack, tenant, campaign);
      const rows = await stack.withSql(
        (sql) => sql<{ recipient: string; status: string }[]>`
          select recipient, status from campaign_messages where campaign_id = ${campaign.id}`,
      );
      const groups = GROUPS.map((group) => {
        const mine = rows.filter((row) => row.recipient.startsWith(group.prefix));
        const received = inbox.filter(
          (message) => message.body === campaign.body && message.to.startsWith(group.prefix),
        ).length;
        return {
          group: group.name,
          total: mine.length,
          sent: mine.filter((row) => row.status === 'sent').length,
          failed: mine.filter((row) => row.status === 'failed').length,
          received,
        };
      });
      const rejected = groups.find((group) => group.group === 'rejected');
      const deaths = stack.deaths();
      return {
        figures: {
          lost: audit.lost,
          duplicated: audit.duplicated,
          sent: counters?.sent ?? null,
          failed: counters?.failed ?? null,
          total: counters?.total ?? null,
          orphans: audit.orphans,
          failed_but_received: audit.failed_but_received,
          groups,
          seconds_sending: seconds(completedAt - started),
          workspace: audit,
          deaths,
        },
        checks: [
          ...exactlyOnceChecks(audit, [counters]),
          check('campaign completed', completed, completed, 'within 180 s'),
          check(
            'rejections',
            rejected,
            rejected?.failed === rejected?.total && rejected?.received === 0,
            'every rejected message failed, none received',
          ),
          check(
            'failed but received',
            audit.failed_but_received,
            audit.failed_but_received === 0,
            'a message counted failed never reached the phone (the simulator can be asked)',
          ),
          check('processes dead', deaths.length, deaths.length === 0, '0 processes dead'),
        ],
      };
    } finally {
      await stack.close(options.keep);
    }
  },
};
