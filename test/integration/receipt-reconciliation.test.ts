/**
 * Receipts that never came (issue 24 C), on the real stack: a worker of its own, in a namespace of
 * its own, tells providers to post receipts to an api that refuses them all (503, as while
 * Postgres is away), so a simulator's four tries end and the messages stay awaiting. The
 * reconciliation workflow then looks them up at the provider, or gives them up as `unknown`, and
 * the reports count them so. Messages are aged by moving their submission time back, since
 * Postgres's clock cannot be skipped; the windows are 20 minutes and 48 hours.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TypedSearchAttributes } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createSmppSessions } from '../../activities/smpp-binds.js';
import { loadBatchReport } from '../../commands/console/batches.js';
import {
  NO_RECEIPT_ERROR_CODE,
  recordDelivery,
  settleMessages,
} from '../../db/campaign-messages.js';
import { insertProvider, setProviderActive } from '../../db/providers.js';
import { createDeliverySummaryCache } from '../../mcp/delivery-summary-cache.js';
import { getDeliverySummary } from '../../mcp/tools/get-delivery-summary.js';
import { getQuickSendReport } from '../../mcp/tools/get-quick-send-report.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { encryptCredentials, providerCredentialsContext } from '../../security/credentials.js';
import { type RunningWorker, startHeraldWorker } from '../../server/worker.js';
import { ensureReceiptReconciliationSchedule } from '../../temporal/schedules.js';
import {
  RECEIPT_RECONCILIATION_SCHEDULE_ID,
  searchAttributes,
  TASK_QUEUE,
} from '../../workflows/definitions.js';
import { receiptSignature } from '../support/receipts.js';
import {
  messageRows,
  numbers,
  saveDirectCampaign,
  sendQueued,
  setBehaviour,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import {
  createTenant,
  openStack,
  registerTestNamespace,
  type Stack,
  type Tenant,
} from '../support/stack.js';

const namespace = `herald-receipts-${Date.now()}`;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const WINDOWS = { lookupAfterSeconds: 20 * 60, giveUpAfterSeconds: 48 * 3600 };
/** The simulator's tries at one receipt (providers/simulator/receipts.ts). */
const RECEIPT_TRIES = 4;

let stack: Stack;
let tenant: Tenant;
let carrier: RunningSimulator;
let worker: RunningWorker;
let refusing: http.Server;
/** Receipt POSTs the refusing api answered, by message reference. */
const refused = new Map<string, number>();
/** What the stand-in provider does when a message is looked up, by reference. */
const lookups = new Map<string, () => Promise<unknown>>();
let standIn: http.Server;
let runs = 0;

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/** Runs the reconciliation as its schedule would, with the test's windows; returns its totals. */
function reconcile() {
  runs++;
  return stack.temporal.workflow.execute('receiptReconciliationWorkflow', {
    workflowId: `receipt-reconciliation-${runs}`,
    taskQueue: TASK_QUEUE,
    args: [WINDOWS],
  });
}

/** Moves a campaign's submissions back in time, as if they had been made that long ago. */
async function age(campaignId: number, ms: number, seqs?: number[]) {
  await stack.sql`
    update campaign_messages set submitted_at = submitted_at - make_interval(secs => ${ms / 1000})
    where campaign_id = ${campaignId} ${seqs ? stack.sql`and seq = any(${seqs})` : stack.sql``}`;
}

/** A campaign of `count` messages already sent through `provider`, with these provider ids. */
async function sentCampaign(provider: string, ids: string[]): Promise<number> {
  const id = await saveDirectCampaign(stack, tenant.workspaceId, {
    body: 'Seeded',
    providerSlug: provider,
    recipients: numbers(ids.length),
  });
  await settleMessages(
    stack.sql,
    id,
    ids.map((providerMessageId, index) => ({
      seq: index + 1,
      status: 'sent',
      provider,
      providerMessageId,
      error: null,
    })),
  );
  return id;
}

/** A receipt posted to Herald's receipt webhook as a simulator-protocol provider signs it. */
async function postReceipt(
  slug: string,
  receipt: { id: string; reference: string; status: string; error_code: string | null; at: string },
) {
  const response = await stack.app.inject({
    method: 'POST',
    url: `/webhooks/providers/${slug}`,
    headers: {
      'content-type': 'application/json',
      ...receiptSignature(tenant.workspaceId, slug, receipt),
    },
    payload: JSON.stringify(receipt),
  });
  expect(response.statusCode).toBe(204);
}

const toolContext = () => ({
  sql: stack.sql,
  caller: { workspaceId: tenant.workspaceId, userId: 0 },
  now: () => new Date(),
  deliverySummaries: createDeliverySummaryCache(0),
});

async function quickSendCounts(campaignId: number) {
  const { quick_send } = await getQuickSendReport.run(
    toolContext() as never,
    z.object(getQuickSendReport.inputSchema).parse({ quick_send_id: campaignId }),
  );
  const { sent, delivered, delivery_failed, delivery_unknown, awaiting_delivery } = quick_send;
  return { sent, delivered, delivery_failed, delivery_unknown, awaiting_delivery };
}

beforeAll(async () => {
  await registerTestNamespace(namespace);
  stack = await openStack(namespace);
  tenant = await createTenant(stack.admin);
  refusing = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const reference = (JSON.parse(body || '{}') as { reference?: string }).reference ?? '';
      refused.set(reference, (refused.get(reference) ?? 0) + 1);
      response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
      response.end('{"message":"Service unavailable."}');
    });
  });
  standIn = http.createServer((request, response) => {
    const reference = new URL(request.url ?? '/', 'http://stand-in').searchParams.get('reference');
    const answer = lookups.get(reference ?? '');
    if (!answer) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"messages":[]}');
      return;
    }
    void answer().then((messages) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ messages }));
    });
  });
  const [refusingUrl, standInUrl] = await Promise.all([listen(refusing), listen(standIn)]);
  carrier = await simulatorProvider(stack, tenant.workspaceId, 'carrier', {
    behaviour: { receipt: { outcome: 'delivered', delay_ms: 0 } },
  });
  await insertProvider(stack.sql, {
    workspaceId: tenant.workspaceId,
    slug: 'racing',
    name: 'Racing',
    type: 'simulator',
    requiresSenderId: false,
    settings: { base_url: standInUrl },
  });
  // An SMPP provider, disabled from the start so that no worker binds to it: its messages' receipts
  // are still looked for, and SMPP has no status lookup.
  await stack.sql.begin(async (tx) => {
    const { id } = await insertProvider(tx, {
      workspaceId: tenant.workspaceId,
      slug: 'smsc',
      name: 'SMSC',
      type: 'smpp',
      requiresSenderId: false,
      settings: { host: '127.0.0.1', port: '2775' },
      credentials: encryptCredentials(
        inject('secret'),
        providerCredentialsContext(tenant.workspaceId, 'smsc'),
        { system_id: 'herald', password: 'secret1' },
      ),
    });
    await setProviderActive(tx, tenant.workspaceId, 'smsc', false);
    return id;
  });
  worker = await startHeraldWorker({
    address: inject('temporalAddress'),
    namespace,
    sql: stack.sql,
    ownProviderUrl: carrier.url,
    publicUrl: refusingUrl,
    secret: inject('secret'),
    webhookDispatcher: false,
    // Never started: this worker binds to no SMSC.
    smppSessions: createSmppSessions({ sql: stack.sql, secret: inject('secret') }),
  });
}, 120_000);

afterAll(async () => {
  await worker?.shutdown();
  await carrier?.close();
  await new Promise((resolve) => refusing?.close(resolve));
  await new Promise((resolve) => standIn?.close(resolve));
  await stack?.close();
}, 60_000);

describe('messages whose receipts never came (issue 24 C)', () => {
  it("fills in the statuses of receipts the api refused, through the provider's status lookup", async () => {
    const recipients = numbers(3);
    const absent = recipients[2] as string;
    await setBehaviour(carrier.url, {
      prefix: absent,
      receipt: { outcome: 'undelivered', delay_ms: 0, error_code: 'EC_ABSENT' },
    });
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Lost receipts', provider_slug: 'carrier' },
      { total: 3 },
    );
    await waitForCompletion(stack, tenant.token, id);
    const references = [1, 2, 3].map((seq) => `cmp-${id}-${seq}`);
    // The simulator tried each receipt four times, was refused each time, and gave up.
    await expect
      .poll(() => references.map((reference) => refused.get(reference) ?? 0), { timeout: 15_000 })
      .toEqual([RECEIPT_TRIES, RECEIPT_TRIES, RECEIPT_TRIES]);
    expect((await messageRows(stack, id)).map((row) => row.deliveryStatus)).toEqual([
      null,
      null,
      null,
    ]);

    // Inside the lookup window, nothing is asked.
    await reconcile();
    expect((await messageRows(stack, id)).map((row) => row.deliveryStatus)).toEqual([
      null,
      null,
      null,
    ]);
    expect(await quickSendCounts(id)).toEqual({
      sent: 3,
      delivered: 0,
      delivery_failed: 0,
      delivery_unknown: 0,
      awaiting_delivery: 3,
    });

    await age(id, 30 * MINUTE_MS);
    await reconcile();
    const simulatorSays = await Promise.all(
      references.map(async (reference) => {
        const answer = await fetch(`${carrier.url}/v1/messages?reference=${reference}`);
        const [message] = ((await answer.json()) as { messages: { status_at: string }[] }).messages;
        return new Date(message?.status_at as string);
      }),
    );
    expect(
      (await messageRows(stack, id)).map((row) => [
        row.deliveryStatus,
        row.deliveryErrorCode,
        row.deliveredAt,
      ]),
    ).toEqual([
      ['delivered', null, simulatorSays[0]],
      ['delivered', null, simulatorSays[1]],
      ['undelivered', 'EC_ABSENT', simulatorSays[2]],
    ]);
    expect(await quickSendCounts(id)).toEqual({
      sent: 3,
      delivered: 2,
      delivery_failed: 1,
      delivery_unknown: 0,
      awaiting_delivery: 0,
    });
  });

  it('gives a message whose provider has no status lookup (SMPP) an unknown receipt after 48 hours, counted as neither delivered, failed nor awaiting; a late receipt still replaces it', async () => {
    const id = await sentCampaign('smsc', ['smsc-overdue', 'smsc-recent']);
    await age(id, 49 * HOUR_MS, [1]);
    await age(id, 30 * MINUTE_MS, [2]);
    await reconcile();

    const [overdue, recent] = await messageRows(stack, id);
    expect([overdue?.deliveryStatus, overdue?.deliveryErrorCode]).toEqual([
      'unknown',
      NO_RECEIPT_ERROR_CODE,
    ]);
    const givenUpAt = overdue?.deliveredAt ?? new Date(0);
    expect(Date.now() - givenUpAt.getTime()).toBeLessThan(MINUTE_MS);
    // Not overdue yet: asked about (nobody to ask), and left awaiting until then.
    expect([recent?.deliveryStatus, recent?.deliveredAt]).toEqual([null, null]);
    const [{ checked } = { checked: false }] = await stack.sql<{ checked: boolean }[]>`
      select receipt_checked_at is not null as checked from campaign_messages
      where campaign_id = ${id} and seq = 2`;
    expect(checked).toBe(true);

    const counted = {
      sent: 2,
      delivered: 0,
      delivery_failed: 0,
      delivery_unknown: 1,
      awaiting_delivery: 1,
    };
    expect(await quickSendCounts(id)).toEqual(counted);
    expect((await loadBatchReport(stack, tenant.workspaceId, id))?.awaiting).toBe(1);
    const summary = await getDeliverySummary.run(
      toolContext() as never,
      z.object(getDeliverySummary.inputSchema).parse({ days: 7 }),
    );
    // The tenant's week: this campaign and the first test's.
    expect(summary).toMatchObject({
      sent: 5,
      delivered: 2,
      failed: 1,
      delivery_unknown: 1,
      awaiting_delivery: 1,
    });

    // The SMSC's receipt, dated before Herald gave up, comes after all: the provider's word wins.
    const late = new Date(Date.now() - 47 * HOUR_MS);
    const { kept } = await recordDelivery(stack.sql, {
      campaignId: id,
      seq: 1,
      provider: 'smsc',
      providerMessageId: 'smsc-overdue',
      status: 'delivered',
      errorCode: null,
      at: late,
    });
    expect(kept).toBe(true);
    expect(await quickSendCounts(id)).toEqual({
      ...counted,
      delivered: 1,
      delivery_unknown: 0,
    });
  });

  it('keeps a receipt that arrives while the message is looked up: the older status looked up loses', async () => {
    const id = await sentCampaign('racing', ['race-1']);
    const reference = `cmp-${id}-1`;
    const receiptAt = new Date();
    const lookedUpAt = new Date(receiptAt.getTime() - 5 * MINUTE_MS);
    lookups.set(reference, async () => {
      // The provider's retried receipt gets through just as Herald asks.
      await postReceipt('racing', {
        id: 'race-1',
        reference,
        status: 'undelivered',
        error_code: 'EC_ABSENT',
        at: receiptAt.toISOString(),
      });
      return [
        {
          id: 'race-1',
          reference,
          status: 'delivered',
          error_code: null,
          status_at: lookedUpAt.toISOString(),
        },
      ];
    });
    await age(id, 30 * MINUTE_MS);
    await reconcile();
    const [row] = await messageRows(stack, id);
    expect([row?.deliveryStatus, row?.deliveryErrorCode, row?.deliveredAt]).toEqual([
      'undelivered',
      'EC_ABSENT',
      receiptAt,
    ]);
  });

  it('never gives up a message whose receipt arrived while it was being looked up', async () => {
    const id = await sentCampaign('racing', ['race-2']);
    const reference = `cmp-${id}-1`;
    const receiptAt = new Date(Date.now() - 48 * HOUR_MS);
    lookups.set(reference, async () => {
      await postReceipt('racing', {
        id: 'race-2',
        reference,
        status: 'delivered',
        error_code: null,
        at: receiptAt.toISOString(),
      });
      // Still on its way, says the lookup: past the give-up window, that would make it unknown.
      return [{ id: 'race-2', reference, status: 'accepted', error_code: null, status_at: null }];
    });
    await age(id, 49 * HOUR_MS);
    await reconcile();
    const [row] = await messageRows(stack, id);
    expect([row?.deliveryStatus, row?.deliveryErrorCode, row?.deliveredAt]).toEqual([
      'delivered',
      null,
      receiptAt,
    ]);
    expect(await quickSendCounts(id)).toMatchObject({ delivered: 1, delivery_unknown: 0 });
  });

  it('is scheduled every 5 minutes with the configured windows, updated when they change', async () => {
    try {
      await ensureReceiptReconciliationSchedule(stack.temporal, WINDOWS);
      const changed = { lookupAfterSeconds: 300, giveUpAfterSeconds: 3600 };
      await ensureReceiptReconciliationSchedule(stack.temporal, changed);
      const schedule = await stack.temporal.schedule
        .getHandle(RECEIPT_RECONCILIATION_SCHEDULE_ID)
        .describe();
      expect(schedule.spec.intervals?.map((interval) => interval.every)).toEqual([5 * MINUTE_MS]);
      expect(schedule.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'receiptReconciliationWorkflow',
        args: [changed],
        taskQueue: TASK_QUEUE,
      });
      const attributes = schedule.action.typedSearchAttributes as TypedSearchAttributes;
      expect(attributes.get(searchAttributes.kind)).toBe('receipts');
    } finally {
      await stack.temporal.schedule.getHandle(RECEIPT_RECONCILIATION_SCHEDULE_ID).delete();
    }
  });
});
