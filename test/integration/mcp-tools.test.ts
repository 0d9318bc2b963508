/**
 * The seven read-only MCP tools of docs/spec.md §4.5 as handlers, on the real Postgres: batches are
 * written by the service's own db functions (so the reporting triggers of migration 0004 fill
 * the tables the tools read), and every result is compared whole. Transport, OAuth and the
 * per-call permission checks are tested with the MCP server (test/e2e/mcp-client.test.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cancelCampaign } from '../../db/campaign-lifecycle.js';
import {
  completeCampaign,
  recordDeliveries,
  recordDelivery,
  settleMessages,
} from '../../db/campaign-messages.js';
import { insertCampaign, recordDispatch } from '../../db/campaigns.js';
import { insertInvitation, revokeInvitation } from '../../db/invitations.js';
import { updateMember } from '../../db/members.js';
import { insertFailoverRoute, insertProvider } from '../../db/providers.js';
import { upsertMember } from '../../db/users.js';
import { insertWorkspace } from '../../db/workspaces.js';
import { ROLE_PERMISSIONS, type Role } from '../../domain/access.js';
import {
  createDeliverySummaryCache,
  type DeliverySummaryCache,
} from '../../mcp/delivery-summary-cache.js';
import { getCampaignReport } from '../../mcp/tools/get-campaign-report.js';
import { getCompletedCampaignSummary } from '../../mcp/tools/get-completed-campaign-summary.js';
import { getDeliverySummary } from '../../mcp/tools/get-delivery-summary.js';
import { getQuickSendReport } from '../../mcp/tools/get-quick-send-report.js';
import { getTeamStatistics } from '../../mcp/tools/get-team-statistics.js';
import { tools } from '../../mcp/tools/index.js';
import { listRecentCampaigns } from '../../mcp/tools/list-recent-campaigns.js';
import { listRecentQuickSends } from '../../mcp/tools/list-recent-quick-sends.js';
import { type HeraldTool, type ToolContext, ToolRefusal } from '../../mcp/tools/tool.js';
import { markInterrupted, numbers } from '../support/send.js';
import { openStack, type Stack } from '../support/stack.js';

const BODY = 'Your table at Luigi is ready';
const MINUTE = 60_000;
const DAY = 86_400_000;
/** Provider message ids are unique across the database, which may outlive this run. */
const RUN = randomUUID().slice(0, 8);

let stack: Stack;
const recipientsSeen: string[] = [];

beforeAll(async () => {
  stack = await openStack();
});

afterAll(async () => {
  await stack?.close();
});

function contextFor(
  workspaceId: number,
  now: Date | (() => Date),
  deliverySummaries: DeliverySummaryCache = createDeliverySummaryCache(0),
): ToolContext {
  return {
    sql: stack.sql,
    caller: { workspaceId, userId: 0 },
    now: typeof now === 'function' ? now : () => now,
    deliverySummaries,
  };
}

/** Calls the handler as the MCP server does: with the input its zod shape parsed. */
function call<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  tool: HeraldTool<I, O>,
  context: ToolContext,
  input: Record<string, unknown> = {},
) {
  return tool.run(context, z.object(tool.inputSchema).parse(input));
}

async function refusalOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ToolRefusal);
  return (error as ToolRefusal).message;
}

async function workspace(): Promise<number> {
  const slug = `r-${randomBytes(6).toString('hex')}`;
  return (await insertWorkspace(stack.sql, { slug, name: `Reports ${slug}` })).id;
}

interface BatchSeed {
  recipients: number;
  source?: 'api' | 'quick_send' | 'campaign';
  name?: string;
  reference?: string;
  purpose?: 'transactional' | 'marketing';
  provider?: string;
  failoverRoute?: string;
}

/** A dispatched batch (status queued), saved as a send saves it. */
async function batch(workspaceId: number, seed: BatchSeed): Promise<number> {
  const recipients = numbers(seed.recipients);
  recipientsSeen.push(...recipients);
  const { id } = await insertCampaign(stack.sql, {
    workspaceId,
    apiKeyId: null,
    source: seed.source ?? 'api',
    name: seed.name ?? null,
    reference: seed.reference ?? null,
    purpose: seed.purpose ?? 'transactional',
    body: BODY,
    senderId: null,
    routingType: seed.failoverRoute ? 'failover' : 'direct',
    providerSlug: seed.failoverRoute ? null : (seed.provider ?? 'own'),
    failoverRouteSlug: seed.failoverRoute ?? null,
    recipients,
  });
  await recordDispatch(stack.sql, id, `campaign/${workspaceId}/id-${id}`);
  return id;
}

const providerMessageId = (batchId: number, seq: number) => `${RUN}-${batchId}-${seq}`;

/** Settles messages as the send activity does: `sent` through `provider`, or `failed`. */
async function settle(
  batchId: number,
  outcomes: Record<number, 'sent' | 'failed'>,
  provider = 'own',
) {
  await settleMessages(
    stack.sql,
    batchId,
    Object.entries(outcomes).map(([seq, status]) => ({
      seq: Number(seq),
      status,
      provider: status === 'sent' ? provider : null,
      providerMessageId: status === 'sent' ? providerMessageId(batchId, Number(seq)) : null,
      error: status === 'failed' ? `${provider}: Destination rejected.` : null,
    })),
  );
}

/** A provider's delivery receipt; false when it was ignored (older than the one kept). */
async function receipt(
  batchId: number,
  seq: number,
  status: 'delivered' | 'undelivered',
  at: Date,
  provider = 'own',
) {
  const { kept } = await recordDelivery(stack.sql, {
    campaignId: batchId,
    seq,
    provider,
    providerMessageId: providerMessageId(batchId, seq),
    status,
    errorCode: status === 'undelivered' ? '30003' : null,
    at,
  });
  return kept;
}

async function timesOf(batchId: number) {
  const [row] = await stack.sql<{ createdAt: Date; completedAt: Date | null }[]>`
    select created_at, completed_at from campaigns where id = ${batchId}`;
  if (!row) throw new Error(`no campaign ${batchId}`);
  return {
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

const counts = (
  recipients: number,
  sent: number,
  failed_to_send: number,
  delivered: number,
  delivery_failed: number,
  delivery_rate_percent: number,
) => ({
  recipients,
  sent,
  failed_to_send,
  delivered,
  delivery_failed,
  delivery_unknown: 0,
  awaiting_delivery: sent - delivered - delivery_failed,
  delivery_rate_percent,
  replies: 0,
  canceled: 0,
});

describe('a canceled campaign', () => {
  it('is reported canceled, with the messages its cancel left unsent', async () => {
    const workspaceId = await workspace();
    const id = await batch(workspaceId, { source: 'campaign', name: 'Autumn', recipients: 5 });
    await settle(id, { 1: 'sent', 2: 'failed' });
    expect(await cancelCampaign(stack.sql, workspaceId, id)).toMatchObject({ kind: 'canceled' });
    const report = await call(getCampaignReport, contextFor(workspaceId, new Date()), {
      campaign_id: id,
    });
    expect(report.campaign).toMatchObject({
      status: 'canceled',
      ...counts(5, 1, 1, 0, 0, 0),
      canceled: 3,
    });
  });
});

describe('campaign and Quick Send tools (docs/spec.md §2.5, §4.5 rule 1)', () => {
  let workspaceId: number;
  let otherWorkspaceId: number;
  let spring: number;
  let apiSend: number;
  let dashboardSend: number;
  let legacySend: number;
  let winter: number;
  let elsewhere: number;
  const now = new Date();
  let context: ToolContext;

  beforeAll(async () => {
    workspaceId = await workspace();
    otherWorkspaceId = await workspace();
    context = contextFor(workspaceId, now);
    await insertProvider(stack.sql, {
      workspaceId,
      slug: 'acme',
      name: 'Acme SMS',
      type: 'simulator',
      requiresSenderId: false,
      settings: {},
    });
    await insertFailoverRoute(stack.sql, {
      workspaceId,
      slug: 'backup',
      name: 'Backup route',
      providerSlugs: ['acme', 'own'],
    });

    spring = await batch(workspaceId, {
      source: 'campaign',
      name: 'Spring sale',
      purpose: 'marketing',
      provider: 'acme',
      recipients: 4,
    });
    await settle(spring, { 1: 'sent', 2: 'sent', 3: 'sent', 4: 'failed' }, 'acme');
    await receipt(spring, 1, 'delivered', new Date(), 'acme');
    await receipt(spring, 2, 'undelivered', new Date(), 'acme');
    await completeCampaign(stack.sql, spring);

    apiSend = await batch(workspaceId, { failoverRoute: 'backup', recipients: 2 });
    await settle(apiSend, { 1: 'sent', 2: 'sent' }, 'acme');
    await receipt(apiSend, 1, 'delivered', new Date(), 'acme');
    await receipt(apiSend, 2, 'delivered', new Date(), 'acme');
    await completeCampaign(stack.sql, apiSend);

    dashboardSend = await batch(workspaceId, {
      source: 'quick_send',
      name: 'Opening hours',
      recipients: 1,
    });

    // An older record, written before batches carried their source.
    const [legacy] = await stack.sql<{ id: number }[]>`
      insert into campaigns (workspace_id, source, purpose, body, routing_type, provider_slug,
                             status, requested_recipients, completed_at)
      values (${workspaceId}, null, 'transactional', ${BODY}, 'direct', 'own', 'completed', 1, now())
      returning id`;
    legacySend = (legacy as { id: number }).id;
    const [legacyRecipient] = numbers(1) as [string];
    recipientsSeen.push(legacyRecipient);
    await stack.sql`
      insert into campaign_messages (campaign_id, seq, recipient)
      values (${legacySend}, 1, ${legacyRecipient})`;
    await settle(legacySend, { 1: 'sent' });

    winter = await batch(workspaceId, { source: 'campaign', name: 'Winter promo', recipients: 3 });
    elsewhere = await batch(otherWorkspaceId, {
      source: 'campaign',
      name: 'Elsewhere',
      recipients: 1,
    });
  });

  const springItem = async () => ({
    id: spring,
    name: 'Spring sale',
    status: 'completed',
    purpose: 'marketing',
    ...(await timesOf(spring)),
    ...counts(4, 3, 1, 1, 1, 33.33),
  });
  const winterItem = async () => ({
    id: winter,
    name: 'Winter promo',
    status: 'queued',
    purpose: 'transactional',
    ...(await timesOf(winter)),
    ...counts(3, 0, 0, 0, 0, 0),
  });

  it('list_recent_campaigns lists named campaigns only, newest first, up to the limit', async () => {
    expect(await call(listRecentCampaigns, context)).toEqual({
      campaigns: [await winterItem(), await springItem()],
    });
    expect(await call(listRecentCampaigns, context, { limit: 1 })).toEqual({
      campaigns: [await winterItem()],
    });
  });

  it('list_recent_quick_sends lists dashboard, API and unknown-source batches with their source', async () => {
    const legacy = {
      id: legacySend,
      source: 'unknown',
      name: `Batch #${legacySend}`,
      status: 'completed',
      purpose: 'transactional',
      ...(await timesOf(legacySend)),
      ...counts(1, 1, 0, 0, 0, 0),
    };
    const dashboard = {
      id: dashboardSend,
      source: 'quick_send',
      name: 'Opening hours',
      status: 'queued',
      purpose: 'transactional',
      ...(await timesOf(dashboardSend)),
      ...counts(1, 0, 0, 0, 0, 0),
    };
    const api = {
      id: apiSend,
      source: 'api',
      name: `API send #${apiSend}`,
      status: 'completed',
      purpose: 'transactional',
      ...(await timesOf(apiSend)),
      ...counts(2, 2, 0, 2, 0, 100),
    };
    expect(await call(listRecentQuickSends, context)).toEqual({
      quick_sends: [legacy, dashboard, api],
    });
    expect(await call(listRecentQuickSends, context, { limit: 2 })).toEqual({
      quick_sends: [legacy, dashboard],
    });
  });

  it('get_campaign_report reports routing, provider, status, counts and delivery rate', async () => {
    expect(await call(getCampaignReport, context, { campaign_id: spring })).toEqual({
      generated_at: now.toISOString(),
      campaign: {
        id: spring,
        name: 'Spring sale',
        status: 'completed',
        purpose: 'marketing',
        routing_type: 'direct',
        provider: { name: 'Acme SMS', slug: 'acme' },
        failover_route: null,
        ...(await timesOf(spring)),
        ...counts(4, 3, 1, 1, 1, 33.33),
      },
    });
  });

  it('get_quick_send_report reports an API send through a failover route', async () => {
    expect(await call(getQuickSendReport, context, { quick_send_id: apiSend })).toEqual({
      generated_at: now.toISOString(),
      quick_send: {
        id: apiSend,
        source: 'api',
        name: `API send #${apiSend}`,
        status: 'completed',
        purpose: 'transactional',
        routing_type: 'failover',
        provider: null,
        failover_route: { name: 'Backup route', slug: 'backup' },
        ...(await timesOf(apiSend)),
        ...counts(2, 2, 0, 2, 0, 100),
      },
    });
  });

  it('get_quick_send_report names an API send after its reference', async () => {
    const ownWorkspace = await workspace();
    const referenced = await batch(ownWorkspace, { recipients: 1, reference: 'invoice-reminders' });
    const { quick_send } = (await call(getQuickSendReport, contextFor(ownWorkspace, now), {
      quick_send_id: referenced,
    })) as { quick_send: { name: string; source: string } };
    expect({ name: quick_send.name, source: quick_send.source }).toEqual({
      name: 'invoice-reminders',
      source: 'api',
    });
  });

  it("get_quick_send_report names the service's own provider Herald", async () => {
    expect(await call(getQuickSendReport, context, { quick_send_id: dashboardSend })).toEqual({
      generated_at: now.toISOString(),
      quick_send: {
        id: dashboardSend,
        source: 'quick_send',
        name: 'Opening hours',
        status: 'queued',
        purpose: 'transactional',
        routing_type: 'direct',
        provider: { name: 'Herald', slug: 'own' },
        failover_route: null,
        created_at: (await timesOf(dashboardSend)).created_at,
        completed_at: null,
        ...counts(1, 0, 0, 0, 0, 0),
      },
    });
  });

  it('campaign tools refuse Quick Send ids and Quick Send tools refuse campaign ids', async () => {
    expect(await refusalOf(call(getCampaignReport, context, { campaign_id: apiSend }))).toBe(
      `Batch ${apiSend} is a Quick Send, not a campaign; use get_quick_send_report.`,
    );
    expect(await refusalOf(call(getQuickSendReport, context, { quick_send_id: spring }))).toBe(
      `Batch ${spring} is a campaign, not a Quick Send; use get_campaign_report.`,
    );
  });

  it("refuses an unknown id, and another workspace's id as if it did not exist", async () => {
    expect(await refusalOf(call(getCampaignReport, context, { campaign_id: 2_000_000_000 }))).toBe(
      'No campaign 2000000000 in this workspace.',
    );
    expect(
      await refusalOf(call(getQuickSendReport, context, { quick_send_id: 2_000_000_000 })),
    ).toBe('No Quick Send 2000000000 in this workspace.');
    expect(await refusalOf(call(getCampaignReport, context, { campaign_id: elsewhere }))).toBe(
      `No campaign ${elsewhere} in this workspace.`,
    );
    expect(await refusalOf(call(getQuickSendReport, context, { quick_send_id: elsewhere }))).toBe(
      `No Quick Send ${elsewhere} in this workspace.`,
    );
    const elsewhereContext = contextFor(otherWorkspaceId, now);
    expect(await call(listRecentCampaigns, elsewhereContext)).toEqual({
      campaigns: [
        {
          id: elsewhere,
          name: 'Elsewhere',
          status: 'queued',
          purpose: 'transactional',
          ...(await timesOf(elsewhere)),
          ...counts(1, 0, 0, 0, 0, 0),
        },
      ],
    });
    expect(await call(listRecentQuickSends, elsewhereContext)).toEqual({ quick_sends: [] });
  });

  it('every output parses with its output schema, and none carries a body or phone number', async () => {
    const outputs: [HeraldTool<z.ZodRawShape, z.ZodRawShape>, Record<string, unknown>][] = [
      [listRecentCampaigns, {}],
      [getCampaignReport, { campaign_id: spring }],
      [getDeliverySummary, { days: 7 }],
      [getCompletedCampaignSummary, {}],
      [listRecentQuickSends, {}],
      [getQuickSendReport, { quick_send_id: legacySend }],
      [getTeamStatistics, {}],
    ];
    expect(outputs.map(([tool]) => tool.name)).toEqual(tools.map((tool) => tool.name));
    for (const [tool, input] of outputs) {
      const output = await call(tool, context, input);
      expect(z.object(tool.outputSchema).strict().parse(output)).toEqual(output);
      const text = JSON.stringify(output);
      expect(text).not.toContain(BODY);
      for (const recipient of recipientsSeen) {
        expect(text).not.toContain(recipient);
        expect(text).not.toContain(recipient.slice(1));
      }
    }
  });
});

describe('get_delivery_summary (docs/spec.md §2.5, §4.5 rules 2 and 3)', () => {
  it('counts each event of campaigns and Quick Sends by its own timestamp within the rolling window', async () => {
    const workspaceId = await workspace();
    const apiSend = await batch(workspaceId, { recipients: 5 });
    const campaign = await batch(workspaceId, {
      source: 'campaign',
      name: 'Autumn',
      recipients: 2,
    });
    await settle(apiSend, { 1: 'sent', 2: 'sent', 3: 'sent', 4: 'failed', 5: 'sent' });
    await settle(campaign, { 1: 'sent', 2: 'sent' });
    const now = new Date();
    const weekStart = new Date(Math.floor(now.getTime() / MINUTE) * MINUTE - 7 * DAY);
    const monthStart = new Date(Math.floor(now.getTime() / MINUTE) * MINUTE - 30 * DAY);
    await receipt(apiSend, 1, 'delivered', new Date(now.getTime() - MINUTE));
    await receipt(apiSend, 2, 'delivered', weekStart); // the first instant of the week
    await receipt(apiSend, 3, 'undelivered', new Date(weekStart.getTime() - 1)); // just before it
    await receipt(apiSend, 5, 'delivered', new Date(now.getTime() + 5 * MINUTE)); // after `to`
    await receipt(campaign, 1, 'delivered', new Date(now.getTime() - 2 * MINUTE));
    const context = contextFor(workspaceId, now);

    expect(await call(getDeliverySummary, context, { days: 7 })).toEqual({
      period_days: 7,
      from: weekStart.toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      period_type: 'rolling',
      sent: 6,
      delivered: 3,
      failed: 1,
      delivery_unknown: 0,
      awaiting_delivery: 1,
      delivery_rate_percent: 50,
      replies: 0,
    });
    expect(await call(getDeliverySummary, context)).toEqual({
      period_days: 30,
      from: monthStart.toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      period_type: 'rolling',
      sent: 6,
      delivered: 3,
      failed: 2,
      delivery_unknown: 0,
      awaiting_delivery: 1,
      delivery_rate_percent: 50,
      replies: 0,
    });
  });

  it('answers zeros and a 0 % rate for a workspace that sent nothing', async () => {
    const now = new Date();
    const from = new Date(Math.floor(now.getTime() / MINUTE) * MINUTE - 30 * DAY);
    expect(await call(getDeliverySummary, contextFor(await workspace(), now))).toEqual({
      period_days: 30,
      from: from.toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      period_type: 'rolling',
      sent: 0,
      delivered: 0,
      failed: 0,
      delivery_unknown: 0,
      awaiting_delivery: 0,
      delivery_rate_percent: 0,
      replies: 0,
    });
  });

  it("reuses a workspace's summary within the TTL, unchanged, and recomputes after it", async () => {
    const workspaceId = await workspace();
    const otherWorkspaceId = await workspace();
    const apiSend = await batch(workspaceId, { recipients: 2 });
    await settle(apiSend, { 1: 'sent' });
    const started = new Date();
    let clock = started;
    const cache = createDeliverySummaryCache(30);
    const context = contextFor(workspaceId, () => clock, cache);
    const summary = (at: Date, sent: number, days: 7 | 30 = 30) => ({
      period_days: days,
      from: new Date(Math.floor(at.getTime() / MINUTE) * MINUTE - days * DAY).toISOString(),
      to: at.toISOString(),
      generated_at: at.toISOString(),
      period_type: 'rolling',
      sent,
      delivered: 0,
      failed: 0,
      delivery_unknown: 0,
      awaiting_delivery: sent,
      delivery_rate_percent: 0,
      replies: 0,
    });

    expect(await call(getDeliverySummary, context)).toEqual(summary(started, 1));
    await settle(apiSend, { 2: 'sent' });
    clock = new Date(started.getTime() + 29_999);
    expect(await call(getDeliverySummary, context)).toEqual(summary(started, 1));
    // Each period and each workspace has its own entry.
    expect(await call(getDeliverySummary, context, { days: 7 })).toEqual(summary(clock, 2, 7));
    expect(
      await call(
        getDeliverySummary,
        contextFor(otherWorkspaceId, () => clock, cache),
      ),
    ).toEqual(summary(clock, 0));
    clock = new Date(started.getTime() + 30_000);
    expect(await call(getDeliverySummary, context)).toEqual(summary(clock, 2));
  });

  it('recomputes on every call with TTL 0', async () => {
    const workspaceId = await workspace();
    const apiSend = await batch(workspaceId, { recipients: 2 });
    const now = new Date();
    const context = contextFor(workspaceId, now, createDeliverySummaryCache(0));
    await settle(apiSend, { 1: 'sent' });
    expect(await call(getDeliverySummary, context)).toMatchObject({
      sent: 1,
      awaiting_delivery: 1,
    });
    await settle(apiSend, { 2: 'failed' });
    expect(await call(getDeliverySummary, context)).toMatchObject({
      generated_at: now.toISOString(),
      sent: 1,
      failed: 1,
      awaiting_delivery: 1,
    });
  });
});

describe('delivery receipts that overtake, repeat or arrive out of order', () => {
  it('written several to a statement, end as if written one by one in their order', async () => {
    const workspaceId = await workspace();
    const apiSend = await batch(workspaceId, { recipients: 2 });
    await settle(apiSend, { 1: 'sent', 2: 'sent' });
    const t = Date.now();
    const update = (seq: number, status: 'delivered' | 'undelivered', minutesAgo: number) => ({
      campaignId: apiSend,
      seq,
      provider: 'own',
      providerMessageId: providerMessageId(apiSend, seq),
      status,
      errorCode: status === 'undelivered' ? '30003' : null,
      at: new Date(t - minutesAgo * MINUTE),
    });
    const kept = await recordDeliveries(stack.sql, [
      update(1, 'delivered', 3),
      update(1, 'undelivered', 1), // the latest: kept
      update(1, 'delivered', 2),
      { ...update(2, 'undelivered', 1), providerMessageId: 'sim_someone_else' }, // ignored
      update(2, 'delivered', 2),
      update(2, 'undelivered', 2), // as late as the one before, and after it: kept
    ]);
    expect(kept.map((receipt) => receipt.kept)).toEqual([false, true, false, false, false, true]);
    const report = await call(getQuickSendReport, contextFor(workspaceId, new Date()), {
      quick_send_id: apiSend,
    });
    expect(report.quick_send).toMatchObject(counts(2, 2, 0, 0, 2, 0));
  });

  it('count each message once, under its latest receipt, in the report and the summary', async () => {
    const workspaceId = await workspace();
    const apiSend = await batch(workspaceId, { recipients: 3 });
    const report = async () =>
      (
        await call(getQuickSendReport, contextFor(workspaceId, new Date()), {
          quick_send_id: apiSend,
        })
      ).quick_send;
    const t = Date.now();
    const at = (minutesAgo: number) => new Date(t - minutesAgo * MINUTE);

    // The provider's receipt for message 1 arrives before its answer to the submission.
    await markInterrupted(stack, apiSend, [1, 2, 3], 'own');
    expect(await receipt(apiSend, 1, 'delivered', at(4))).toBe(true);
    expect(await report()).toMatchObject(counts(3, 0, 0, 0, 0, 0));

    await settle(apiSend, { 1: 'sent', 2: 'sent', 3: 'sent' });
    expect(await report()).toMatchObject(counts(3, 3, 0, 1, 0, 33.33));

    // The same receipt twice.
    expect(await receipt(apiSend, 2, 'delivered', at(3))).toBe(true);
    expect(await receipt(apiSend, 2, 'delivered', at(3))).toBe(true);
    expect(await report()).toMatchObject(counts(3, 3, 0, 2, 0, 66.67));

    // A newer receipt replaces the first; an older one arriving late is ignored.
    expect(await receipt(apiSend, 3, 'delivered', at(2))).toBe(true);
    expect(await receipt(apiSend, 3, 'undelivered', at(1))).toBe(true);
    expect(await receipt(apiSend, 3, 'delivered', at(2))).toBe(false);
    expect(await report()).toMatchObject(counts(3, 3, 0, 2, 1, 66.67));

    const now = new Date();
    expect(await call(getDeliverySummary, contextFor(workspaceId, now), { days: 7 })).toEqual({
      period_days: 7,
      from: new Date(Math.floor(now.getTime() / MINUTE) * MINUTE - 7 * DAY).toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      period_type: 'rolling',
      sent: 3,
      delivered: 2,
      failed: 1,
      delivery_unknown: 0,
      awaiting_delivery: 0,
      delivery_rate_percent: 66.67,
      replies: 0,
    });
    // No minute of history is left negative by the corrections.
    const [lowest] = await stack.sql<{ min: number }[]>`
      select least(min(sent), min(delivered), min(failed), min(awaiting)) as min
      from report_delivery_minutes where workspace_id = ${workspaceId}`;
    expect(lowest?.min).toBe(0);
  });
});

describe('get_completed_campaign_summary (docs/spec.md §4.5)', () => {
  it('totals named campaigns by completion time, excluding Quick Sends and unfinished campaigns', async () => {
    const workspaceId = await workspace();
    const seed = async (name: string, outcomes: Record<number, 'sent' | 'failed'>) => {
      const id = await batch(workspaceId, {
        source: 'campaign',
        name,
        recipients: Object.keys(outcomes).length,
      });
      await settle(id, outcomes);
      return id;
    };
    const recent = await seed('Recent', { 1: 'sent', 2: 'sent', 3: 'failed' });
    await receipt(recent, 1, 'delivered', new Date());
    await completeCampaign(stack.sql, recent);
    const weekEdge = await seed('Week edge', { 1: 'sent', 2: 'sent' });
    await receipt(weekEdge, 1, 'undelivered', new Date());
    const pastWeek = await seed('Past the week', { 1: 'sent' });
    const monthEdge = await seed('Month edge', { 1: 'sent' });
    const pastMonth = await seed('Past the month', { 1: 'sent', 2: 'sent' });
    await seed('Unfinished', { 1: 'sent' }); // still queued: never completed
    const apiSend = await batch(workspaceId, { recipients: 4 });
    await settle(apiSend, { 1: 'sent', 2: 'sent', 3: 'sent', 4: 'sent' });
    await completeCampaign(stack.sql, apiSend);
    for (const id of [weekEdge, pastWeek, monthEdge, pastMonth]) {
      await completeCampaign(stack.sql, id);
    }
    const now = new Date();
    const completedAt = async (id: number, at: number) => {
      await stack.sql`update campaigns set completed_at = ${new Date(at)} where id = ${id}`;
    };
    await completedAt(weekEdge, now.getTime() - 7 * DAY); // the first instant of the week
    await completedAt(pastWeek, now.getTime() - 7 * DAY - 1);
    await completedAt(monthEdge, now.getTime() - 30 * DAY);
    await completedAt(pastMonth, now.getTime() - 30 * DAY - 1);
    const context = contextFor(workspaceId, now);

    expect(await call(getCompletedCampaignSummary, context, { days: 7 })).toEqual({
      period_days: 7,
      from: new Date(now.getTime() - 7 * DAY).toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      campaigns: 2,
      ...counts(5, 4, 1, 1, 1, 25),
    });
    expect(await call(getCompletedCampaignSummary, context)).toEqual({
      period_days: 30,
      from: new Date(now.getTime() - 30 * DAY).toISOString(),
      to: now.toISOString(),
      generated_at: now.toISOString(),
      campaigns: 4,
      ...counts(7, 6, 1, 1, 1, 16.67),
    });
  });
});

describe('get_team_statistics (docs/spec.md §4.5)', () => {
  it('counts members, active members and invitations still pending', async () => {
    const workspaceId = await workspace();
    const slug = `team-${randomBytes(4).toString('hex')}`;
    const member = async (role: Role) => {
      const email = `${role}@${slug}.test`;
      await upsertMember(stack.sql, {
        workspaceId,
        email,
        passwordHash: 'not-a-real-hash',
        role,
        permissions: ROLE_PERMISSIONS[role],
      });
      return email;
    };
    await member('owner');
    await member('admin');
    for (const email of [await member('developer'), await member('viewer')]) {
      const result = await updateMember(stack.sql, workspaceId, email, (current) => ({
        ...current,
        status: 'suspended',
      }));
      expect(result.outcome).toBe('updated');
    }
    const invite = async (name: string, expiresInDays = 7) => {
      const result = await insertInvitation(stack.sql, {
        workspaceId,
        email: `${name}@${slug}.test`,
        role: 'viewer',
        tokenHash: randomBytes(32),
        expiresInDays,
      });
      if (result.outcome !== 'created') throw new Error(`invitation ${name}: ${result.outcome}`);
      return result;
    };
    await invite('pending');
    // Whole milliseconds, so a JS Date can name the expiry instant exactly.
    const expiresAt = new Date(Date.now() + 3_600_000);
    const expiring = await invite('expiring', 1);
    await stack.sql`update invitations set expires_at = ${expiresAt} where id = ${expiring.id}`;
    expect(await revokeInvitation(stack.sql, (await invite('revoked')).id)).toBe('revoked');
    const accepted = await invite('accepted');
    await stack.sql`update invitations set accepted_at = now() where id = ${accepted.id}`;
    const expired = await invite('expired');
    await stack.sql`update invitations set expires_at = now() - interval '1 minute'
                    where id = ${expired.id}`;

    const justBefore = new Date(expiresAt.getTime() - 1);
    expect(await call(getTeamStatistics, contextFor(workspaceId, justBefore))).toEqual({
      total_members: 4,
      active_members: 2,
      pending_invites: 2,
    });
    // An invitation stops being pending at its expiry instant.
    expect(await call(getTeamStatistics, contextFor(workspaceId, expiresAt))).toEqual({
      total_members: 4,
      active_members: 2,
      pending_invites: 1,
    });
  });
});

describe('tool definitions', () => {
  it('are the seven tools of docs/spec.md §4.5 with the permissions of docs/spec.md §5.2', () => {
    expect(tools.map((tool) => [tool.name, tool.permissions])).toEqual([
      ['list_recent_campaigns', ['campaigns.read']],
      ['get_campaign_report', ['campaigns.read']],
      ['get_delivery_summary', []],
      ['get_completed_campaign_summary', ['reports.read']],
      ['list_recent_quick_sends', ['campaigns.read']],
      ['get_quick_send_report', ['campaigns.read']],
      ['get_team_statistics', ['members.read']],
    ]);
  });

  it('reject arguments outside the limits of docs/spec.md §8 and apply the defaults', () => {
    const input = (tool: HeraldTool<z.ZodRawShape, z.ZodRawShape>) => z.object(tool.inputSchema);
    for (const tool of [listRecentCampaigns, listRecentQuickSends]) {
      for (const limit of [0, 51, 2.5, '20']) {
        expect(input(tool).safeParse({ limit }).success, `${tool.name} limit ${limit}`).toBe(false);
      }
      expect(input(tool).parse({})).toEqual({ limit: 20 });
      expect(input(tool).parse({ limit: 1 })).toEqual({ limit: 1 });
      expect(input(tool).parse({ limit: 50 })).toEqual({ limit: 50 });
    }
    for (const tool of [getDeliverySummary, getCompletedCampaignSummary]) {
      for (const days of [14, 0, 31, '7']) {
        expect(input(tool).safeParse({ days }).success, `${tool.name} days ${days}`).toBe(false);
      }
      expect(input(tool).parse({})).toEqual({ days: 30 });
      expect(input(tool).parse({ days: 7 })).toEqual({ days: 7 });
    }
    for (const value of [0, -1, 1.5, '12', undefined]) {
      expect(input(getCampaignReport).safeParse({ campaign_id: value }).success).toBe(false);
      expect(input(getQuickSendReport).safeParse({ quick_send_id: value }).success).toBe(false);
    }
    expect(input(getTeamStatistics).parse({})).toEqual({});
  });

  it('describe every input and output field for AI clients', () => {
    const undescribed: string[] = [];
    const visit = (schema: unknown, path: string) => {
      if (!schema || typeof schema !== 'object') return;
      const node = schema as Record<string, unknown>;
      for (const [key, child] of Object.entries((node.properties ?? {}) as object)) {
        if (!(child as { description?: string }).description) undescribed.push(`${path}.${key}`);
        visit(child, `${path}.${key}`);
      }
      for (const nested of [node.items, ...((node.anyOf as unknown[]) ?? [])]) visit(nested, path);
    };
    for (const tool of tools) {
      expect(tool.description.length, tool.name).toBeGreaterThan(100);
      visit(z.toJSONSchema(z.object(tool.inputSchema), { io: 'input' }), `${tool.name} input`);
      visit(z.toJSONSchema(z.object(tool.outputSchema)), `${tool.name} output`);
    }
    expect(undescribed).toEqual([]);
  });
});
