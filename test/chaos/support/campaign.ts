import { randomBytes } from 'node:crypto';
import {
  type CampaignView,
  campaignView,
  recipients as numbers,
  sendUntilFinal,
  type Tenant,
} from './api.js';
import type { CampaignAudit, InboxMessage } from './audit.js';
import { readInbox } from './audit.js';
import { type Check, check } from './scenario.js';
import type { ChaosStack } from './stack.js';
import { seconds, sleep, waitUntil } from './timing.js';

/** A campaign a scenario sends, with the text that tells its messages apart in the inbox. */
export interface SentCampaign {
  id: number;
  key: string;
  body: string;
  recipients: string[];
  /** `data.message` of the final 202 answer. */
  accepted: CampaignView;
}

/** Letters only: an OTP code is found in the inbox as six digits in a row. */
function nonce(): string {
  return [...randomBytes(8)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('');
}

export async function sendCampaign(
  stack: ChaosStack,
  tenant: Tenant,
  options: {
    label: string;
    provider?: string;
    /** Sends through this failover route. */
    route?: string;
    /** The recipients, or `count` numbers from `prefix`. */
    recipients?: string[];
    prefix?: string;
    count?: number;
    /** ISO 8601 with an offset: schedules the campaign. */
    sendAt?: string;
  },
): Promise<SentCampaign> {
  const key = `chaos-${options.label}-${nonce()}`;
  const body = `Chaos ${options.label} ${key}: your parcel is on its way.`;
  const to = options.recipients ?? numbers(options.prefix ?? '+6141', options.count ?? 1);
  const request = {
    recipients: to,
    message: body,
    ...(options.provider ? { provider_slug: options.provider } : {}),
    ...(options.route ? { routing_type: 'failover', failover_route_slug: options.route } : {}),
    ...(options.sendAt ? { send_at: options.sendAt } : {}),
  };
  const { id, answers } = await sendUntilFinal(stack.apiUrls, tenant, request, key);
  const accepted = answers.at(-1)?.body.data.message as CampaignView;
  return { id, key, body, recipients: to, accepted };
}

/** Waits until `count` messages of the campaign are in the inbox. */
export async function untilArrived(
  stack: ChaosStack,
  campaign: SentCampaign,
  count: number,
  timeoutMs = 120_000,
): Promise<number> {
  return waitUntil(
    `${count} messages of campaign ${campaign.id} at the inbox`,
    async () => {
      const arrived = (await readInbox(stack.simulatorUrl)).filter(
        (message) => message.body === campaign.body,
      ).length;
      return arrived >= count ? arrived : undefined;
    },
    timeoutMs,
    100,
  );
}

/** Polls Postgres until every campaign is completed; false if one is not by the deadline. */
export async function untilAllCompleted(
  stack: ChaosStack,
  ids: number[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await stack
      .withSql(
        async (sql) =>
          (
            await sql<{ n: number }[]>`
              select count(*)::int as n from campaigns
              where id = any(${ids}::bigint[]) and status <> 'completed'`
          )[0]?.n,
      )
      .catch(() => undefined);
    if (open === 0) return true;
    await sleep(500);
  }
  return false;
}

/** Seconds from `after` to the campaign's first message received after it, if any. */
export function firstArrivalAfter(
  inbox: InboxMessage[],
  campaign: SentCampaign,
  after: number,
): number | null {
  const times = inbox
    .filter((message) => message.body === campaign.body)
    .map((message) => Date.parse(message.received_at))
    .filter((at) => at > after);
  return times.length > 0 ? seconds(Math.min(...times) - after) : null;
}

export function arrivalsBetween(
  inbox: InboxMessage[],
  campaign: SentCampaign,
  from: number,
  to: number,
): number {
  return inbox.filter((message) => {
    const at = Date.parse(message.received_at);
    return message.body === campaign.body && at >= from && at <= to;
  }).length;
}

/** The campaign's counters as the API reports them. */
export async function apiCounters(stack: ChaosStack, tenant: Tenant, campaign: { id: number }) {
  const view: CampaignView | undefined = await campaignView(
    stack.apiUrls[0] as string,
    tenant,
    campaign.id,
  );
  return view
    ? {
        status: view.status,
        total: view.total_recipients,
        sent: view.sent_count,
        failed: view.failed_count,
        queued: view.queued_count,
      }
    : undefined;
}

export type Counters = NonNullable<Awaited<ReturnType<typeof apiCounters>>>;

/** Totals of several campaigns' counters. */
export function sumCounters(counters: (Counters | undefined)[]) {
  const sum = (pick: (c: Counters) => number) =>
    counters.every((c) => c !== undefined)
      ? counters.reduce((n, c) => n + pick(c as Counters), 0)
      : null;
  return { sent: sum((c) => c.sent), failed: sum((c) => c.failed), total: sum((c) => c.total) };
}

/** The exactly-once invariants every fault scenario holds the workspace and its campaigns to. */
export function exactlyOnceChecks(
  audit: CampaignAudit,
  counters: (Counters | undefined)[],
): Check[] {
  return [
    check('duplicated', audit.duplicated, audit.duplicated === 0, '0 recipients with 2+ copies'),
    check('lost', audit.lost, audit.lost === 0, '0 recipients sent but not received'),
    check('orphans', audit.orphans, audit.orphans === 0, '0 campaigns beside their key'),
    check(
      'settled',
      audit.queued,
      audit.queued === 0,
      'every message of the workspace sent or failed',
    ),
    check(
      'counters add up',
      {
        campaigns: counters.length,
        completed: counters.filter((c) => c?.status === 'completed').length,
        ...sumCounters(counters),
      },
      counters.every(
        (c) => c !== undefined && c.status === 'completed' && c.sent + c.failed === c.total,
      ),
      'each campaign completed, sent + failed = total',
    ),
  ];
}
