/**
 * The console dashboard's 7- and 30-day delivery summaries are the numbers get_delivery_summary
 * gives for the same workspace, its rate included: one formula (domain/delivery-rate.ts), on a
 * count where a second formula would differ (57 of 800: 7.13, not the 7.12 of 57 / 800 × 10,000).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { recordDelivery, settleMessages } from '../../db/campaign-messages.js';
import { insertCampaign, recordDispatch } from '../../db/campaigns.js';
import { createDeliverySummaryCache } from '../../mcp/delivery-summary-cache.js';
import { getDeliverySummary } from '../../mcp/tools/get-delivery-summary.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
const MINUTE_MS = 60_000;
/** Provider message ids are unique across the database, which may outlive this run. */
const RUN = randomBytes(4).toString('hex');

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

/** Distinct Australian mobiles under +61496, a prefix no other test file draws from. */
function numbers(count: number): string[] {
  const chosen = new Set<string>();
  while (chosen.size < count) chosen.add(`+61496${String(randomInt(1_000_000)).padStart(6, '0')}`);
  return [...chosen];
}

/**
 * A dispatched batch of `recipients`, settled as the send activity settles one: the first
 * `failed` fail to send, the rest are sent; of those, `delivered` then `undelivered` get a
 * receipt dated `receiptAt`.
 */
async function seedBatch(
  workspaceId: number,
  counts: { recipients: number; failed: number; delivered: number; undelivered: number },
  receiptAt: Date,
) {
  const { id } = await insertCampaign(server.sql, {
    workspaceId,
    apiKeyId: null,
    source: 'api',
    name: null,
    reference: null,
    purpose: 'transactional',
    body: 'Dashboard check',
    senderId: null,
    routingType: 'direct',
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients: numbers(counts.recipients),
  });
  await recordDispatch(server.sql, id, `campaign/${workspaceId}/id-${id}`);
  const messageId = (seq: number) => `${RUN}-${id}-${seq}`;
  await settleMessages(
    server.sql,
    id,
    Array.from({ length: counts.recipients }, (_, index) => {
      const seq = index + 1;
      const sent = seq > counts.failed;
      return {
        seq,
        status: sent ? ('sent' as const) : ('failed' as const),
        provider: sent ? 'own' : null,
        providerMessageId: sent ? messageId(seq) : null,
        error: sent ? null : 'own: Destination rejected.',
      };
    }),
  );
  const firstSent = counts.failed + 1;
  for (let seq = firstSent; seq < firstSent + counts.delivered + counts.undelivered; seq++) {
    const delivered = seq < firstSent + counts.delivered;
    await recordDelivery(server.sql, {
      campaignId: id,
      seq,
      provider: 'own',
      providerMessageId: messageId(seq),
      status: delivered ? 'delivered' : 'undelivered',
      errorCode: delivered ? null : '30003',
      at: receiptAt,
    });
  }
}

/** A summary card of the dashboard, in get_delivery_summary's terms. */
function shownSummary(text: string, days: 7 | 30) {
  const match = new RegExp(
    `Last ${days} days ([\\d,]+) sent · ([\\d,]+) delivered · ([\\d,]+) failed · ([\\d,]+) awaiting · ([\\d,]+) unknown ([\\d.]+)% delivery rate`,
  ).exec(text);
  expect(match, `the ${days}-day summary on the page`).not.toBeNull();
  const [sent, delivered, failed, awaiting, unknown, rate] = (match as RegExpExecArray)
    .slice(1)
    .map((value) => Number(value.replaceAll(',', '')));
  return {
    period_days: days,
    sent,
    delivered,
    failed,
    delivery_unknown: unknown,
    awaiting_delivery: awaiting,
    delivery_rate_percent: rate,
  };
}

describe('Dashboard delivery summary', () => {
  it('shows the 7- and 30-day numbers get_delivery_summary gives, rate included', async () => {
    const slug = `d-${randomBytes(5).toString('hex')}`;
    const { id: workspaceId } = await createWorkspace(
      server.deps,
      {
        name: `Dashboard ${slug}`,
        slug,
      },
      TEST_OPERATOR,
    );
    const email = `owner@${slug}.test`;
    await addUser(
      server.deps,
      { workspace: slug, email, password: PASSWORD, role: 'owner' },
      TEST_OPERATOR,
    );
    // 800 sent, 57 delivered: 7.13 % with domain/delivery-rate.ts, 7.12 % with (57 / 800) × 10,000.
    await seedBatch(
      workspaceId,
      { recipients: 801, failed: 1, delivered: 57, undelivered: 3 },
      new Date(Date.now() - MINUTE_MS),
    );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    const page = await browser.get(`/console/w/${slug}`);
    expect(page.status).toBe(200);
    const text = visibleText(page.body);

    const context = {
      sql: server.sql,
      caller: { workspaceId, userId: 0 },
      now: () => new Date(),
      deliverySummaries: createDeliverySummaryCache(0),
    };
    for (const days of [7, 30] as const) {
      const tool = await getDeliverySummary.run(
        context,
        z.object(getDeliverySummary.inputSchema).parse({ days }),
      );
      expect(shownSummary(text, days)).toEqual({
        period_days: tool.period_days,
        sent: tool.sent,
        delivered: tool.delivered,
        failed: tool.failed,
        delivery_unknown: tool.delivery_unknown,
        awaiting_delivery: tool.awaiting_delivery,
        delivery_rate_percent: tool.delivery_rate_percent,
      });
    }
    // And the figures themselves, so a mistake both share cannot pass.
    expect(shownSummary(text, 7)).toEqual({
      period_days: 7,
      sent: 800,
      delivered: 57,
      failed: 4,
      delivery_unknown: 0,
      awaiting_delivery: 740,
      delivery_rate_percent: 7.13,
    });
  });
});
