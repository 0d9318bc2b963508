/**
 * A campaign's life after POST /api/v1/messages, on the real stack: its counters while it runs
 * and when it completes, delivery receipts posted back by providers, and marketing opt-outs.
 *
 * The shared worker tells providers to post receipts to 127.0.0.1:<apiPort>. This file is the
 * only one that listens there: it runs its own api instance (same Postgres) with a hook that
 * records each receipt, so a test can compare what was stored with what the provider sent.
 */
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { buildApp } from '../../server/app.js';
import { receiptSignature } from '../support/receipts.js';
import {
  inbox,
  lookup,
  type MessageRow,
  messageRows,
  numbers,
  sendQueued,
  setBehaviour,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const ownUrl = inject('simulatorUrl');
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Receipt {
  id: string;
  reference: string;
  status: string;
  error_code: string | null;
  at: string;
}

let stack: Stack;
let tenant: Tenant;
let receiver: FastifyInstance;
const receipts: Receipt[] = [];
const simulators: RunningSimulator[] = [];

/** A dedicated simulator registered as provider `slug`, closed after the file. */
async function provider(slug: string, behaviour?: Record<string, unknown>) {
  const simulator = await simulatorProvider(stack, tenant.workspaceId, slug, { behaviour });
  simulators.push(simulator);
  return simulator;
}

/** Waits until every message row of the campaign has a delivery status. */
async function rowsOnceReceipted(campaignId: number): Promise<MessageRow[]> {
  await expect
    .poll(async () => (await messageRows(stack, campaignId)).every((row) => row.deliveryStatus), {
      timeout: 15_000,
      interval: 100,
    })
    .toBe(true);
  return messageRows(stack, campaignId);
}

/** The receipt the provider posted for a message of a campaign. */
function receiptFor(campaignId: number, seq: number): Receipt | undefined {
  return receipts.find((receipt) => receipt.reference === `cmp-${campaignId}-${seq}`);
}

/** An api on `sql` for receipts: they need no Temporal, so its client never connects. */
function receiverOn(sql: Sql): FastifyInstance {
  return buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql,
      temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    },
    { logger: false },
  );
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  receiver = receiverOn(stack.sql);
  receiver.addHook('preHandler', async (request) => {
    if (request.url.startsWith('/webhooks/providers/')) receipts.push(request.body as Receipt);
  });
  await receiver.listen({ port: inject('apiPort'), host: '127.0.0.1' });
});

afterAll(async () => {
  await receiver?.close();
  for (const simulator of simulators) await simulator.close();
  await stack?.close();
});

describe('campaign counters (docs/spec.md §2.1, §3)', () => {
  it('shows the messages queued while the provider is slow, then all sent and completed', async () => {
    await provider('slow', { latency_ms: 400 });
    const recipients = numbers(3);
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Slowly', provider_slug: 'slow', reference: 'slow-1' },
      { total: 3, reference: 'slow-1' },
    );
    const running = await lookup(stack, tenant.token, id);
    expect(running).toEqual({
      id,
      reference: 'slow-1',
      status: 'queued',
      total_recipients: 3,
      queued_count: 3,
      sent_count: 0,
      failed_count: 0,
      canceled_count: 0,
      delivered_count: 0,
      undelivered_count: 0,
      created_at: expect.stringMatching(ISO),
      scheduled_at: null,
      completed_at: null,
    });

    const done = await waitForCompletion(stack, tenant.token, id);
    expect(done).toEqual({
      ...running,
      status: 'completed',
      queued_count: 0,
      sent_count: 3,
      // Receipts may come before or after the campaign completes.
      delivered_count: expect.any(Number),
      completed_at: expect.stringMatching(ISO),
    });
    // Then every receipt (the simulator delivers) is counted on the campaign.
    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).delivered_count, {
        timeout: 15_000,
      })
      .toBe(3);
    expect(await lookup(stack, tenant.token, id)).toMatchObject({ undelivered_count: 0 });
    const [row] = await stack.sql<{ completedAt: Date }[]>`
      select completed_at from campaigns where id = ${id}`;
    expect(done.completed_at).toBe(row?.completedAt.toISOString());
    expect(Date.parse(done.completed_at as string)).toBeGreaterThanOrEqual(
      Date.parse(done.created_at) + 400,
    );
  });

  it('counts every message failed when the provider rejects them all', async () => {
    const rejecting = await provider('rejecting', { outcome: 'reject' });
    const recipients = numbers(4);
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Nope', provider_slug: 'rejecting' },
      { total: 4 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      status: 'completed',
      total_recipients: 4,
      queued_count: 0,
      sent_count: 0,
      failed_count: 4,
      completed_at: expect.stringMatching(ISO),
    });
    expect(
      (await messageRows(stack, id)).map(({ recipient, status, providerSlug, error }) => ({
        recipient,
        status,
        providerSlug,
        error,
      })),
    ).toEqual(
      recipients.map((recipient) => ({
        recipient,
        status: 'failed',
        providerSlug: null,
        error: `rejecting: Destination ${recipient} rejected.`,
      })),
    );
    for (const recipient of recipients) expect(await inbox(rejecting.url, recipient)).toEqual([]);
  });

  it('counts sent and failed messages of one campaign separately', async () => {
    const picky = await provider('picky');
    const recipients = numbers(3);
    await setBehaviour(picky.url, { prefix: recipients[1], outcome: 'reject' });
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Some of you', provider_slug: 'picky' },
      { total: 3 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      total_recipients: 3,
      queued_count: 0,
      sent_count: 2,
      failed_count: 1,
    });
    expect((await messageRows(stack, id)).map((row) => row.status)).toEqual([
      'sent',
      'failed',
      'sent',
    ]);
  });
});

describe('delivery receipts (provider webhooks)', () => {
  it("records delivered with the receipt's timestamp for every message", async () => {
    await provider('receipts'); // the simulator's default: delivered after 50 ms
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: numbers(3), message: 'Delivered?', provider_slug: 'receipts' },
      { total: 3 },
    );
    await waitForCompletion(stack, tenant.token, id);
    const rows = await rowsOnceReceipted(id);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const receipt = receiptFor(id, row.seq);
      expect(receipt).toEqual({
        id: row.providerMessageId,
        reference: `cmp-${id}-${row.seq}`,
        status: 'delivered',
        error_code: null,
        at: expect.stringMatching(ISO),
      });
      expect(row).toMatchObject({
        status: 'sent',
        providerSlug: 'receipts',
        deliveryStatus: 'delivered',
        deliveryErrorCode: null,
      });
      expect(row.deliveredAt?.toISOString()).toBe(receipt?.at);
    }
  });

  it('records an undelivered receipt with its error code', async () => {
    await provider('absent', {
      receipt: { outcome: 'undelivered', error_code: 'EC_ABSENT' },
    });
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: numbers(2), message: 'Anyone there?', provider_slug: 'absent' },
      { total: 2 },
    );
    // Submission succeeded: an undelivered receipt does not turn a sent message into a failed one.
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 2,
      failed_count: 0,
    });
    for (const row of await rowsOnceReceipted(id)) {
      expect(row).toMatchObject({
        status: 'sent',
        deliveryStatus: 'undelivered',
        deliveryErrorCode: 'EC_ABSENT',
      });
      expect(row.deliveredAt?.toISOString()).toBe(receiptFor(id, row.seq)?.at);
    }
  });

  it('records a receipt that arrives before the provider has answered the submission', async () => {
    // The SMSC reports delivery at once but answers the submission 300 ms later: the receipt
    // reaches Herald before the provider message id is known.
    await provider('eager', { latency_ms: 300, receipt: { outcome: 'delivered', delay_ms: 0 } });
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: numbers(2), message: 'Quick receipt', provider_slug: 'eager' },
      { total: 2 },
    );
    await waitForCompletion(stack, tenant.token, id);
    for (const row of await rowsOnceReceipted(id)) {
      const receipt = receiptFor(id, row.seq);
      expect(row).toMatchObject({
        status: 'sent',
        providerMessageId: receipt?.id,
        deliveryStatus: 'delivered',
      });
      expect(row.deliveredAt?.toISOString()).toBe(receipt?.at);
    }
  });

  it('keeps the latest receipt and ignores receipts for other provider message ids', async () => {
    await provider('manual', { receipt: { outcome: 'none' } });
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: numbers(1), message: 'Manual receipts', provider_slug: 'manual' },
      { total: 1 },
    );
    await waitForCompletion(stack, tenant.token, id);
    const [sent] = await messageRows(stack, id);
    const post = async (fields: Partial<Receipt> & Pick<Receipt, 'at'>) => {
      const receipt = {
        id: sent?.providerMessageId as string,
        reference: `cmp-${id}-1`,
        status: 'delivered',
        error_code: null,
        ...fields,
      };
      const response = await receiver.inject({
        method: 'POST',
        url: '/webhooks/providers/manual',
        headers: receiptSignature(tenant.workspaceId, 'manual', receipt),
        payload: receipt,
      });
      expect(response.statusCode).toBe(204);
      const [row] = await messageRows(stack, id);
      return [row?.deliveryStatus, row?.deliveryErrorCode, row?.deliveredAt?.toISOString()];
    };
    const t1 = '2030-01-01T00:00:01.000Z';
    const t2 = '2030-01-01T00:00:02.000Z';
    expect(await post({ at: t2 })).toEqual(['delivered', null, t2]);
    expect(await post({ at: t1, status: 'undelivered', error_code: 'LATE' })).toEqual([
      'delivered',
      null,
      t2,
    ]);
    expect(await post({ at: t2, id: 'sim_someone_else', status: 'undelivered' })).toEqual([
      'delivered',
      null,
      t2,
    ]);
  });

  it('records a burst of receipts posted at once as if each had come alone', async () => {
    await provider('burst', { receipt: { outcome: 'none' } });
    const campaigns: number[] = [];
    for (const size of [150, 60])
      campaigns.push(
        await sendQueued(
          stack,
          tenant.token,
          { recipients: numbers(size), message: 'Burst receipts', provider_slug: 'burst' },
          { total: size },
        ),
      );
    type Row = MessageRow & { campaignId: number };
    const rows: Row[] = [];
    for (const id of campaigns) {
      await waitForCompletion(stack, tenant.token, id);
      rows.push(...(await messageRows(stack, id)).map((row) => ({ ...row, campaignId: id })));
    }
    const t1 = '2030-01-01T00:00:01.000Z';
    const t2 = '2030-01-01T00:00:02.000Z';
    const receipt = (row: Row, fields: Partial<Receipt> = {}) => ({
      id: row.providerMessageId as string,
      reference: `cmp-${row.campaignId}-${row.seq}`,
      status: 'delivered',
      error_code: null,
      at: t1,
      ...fields,
    });
    const [first, second, third] = rows as [Row, Row, Row, ...Row[]];
    const burst = [
      ...rows.map((row) => receipt(row)),
      // The same message again, later and undelivered: it wins.
      receipt(first, { at: t2, status: 'undelivered', error_code: 'LATER' }),
      // An earlier receipt: it loses to the one above.
      receipt(second, { at: '2030-01-01T00:00:00.500Z', status: 'undelivered' }),
      // Another message's provider id: ignored.
      receipt(third, { at: t2, id: 'sim_someone_else', status: 'undelivered' }),
    ];
    // A second api with its own pool takes every other receipt, in the opposite order, while 500
    // replays of one receipt arrive: its writes race the first api's over the same rows.
    const secondSql = createSql(inject('databaseUrl'), { max: 4 });
    const secondApi = receiverOn(secondSql);
    const replays = Array.from({ length: 500 }, () => receipt(third));
    try {
      const post = (api: FastifyInstance, payload: ReturnType<typeof receipt>) =>
        api.inject({
          method: 'POST',
          url: '/webhooks/providers/burst',
          headers: receiptSignature(tenant.workspaceId, 'burst', payload),
          payload,
        });
      const answers = await Promise.all([
        ...burst.filter((_, i) => i % 2 === 0).map((payload) => post(receiver, payload)),
        ...burst
          .filter((_, i) => i % 2 === 1)
          .reverse()
          .map((payload) => post(secondApi, payload)),
        ...replays.map((payload) => post(secondApi, payload)),
      ]);
      expect(answers.map((answer) => answer.statusCode)).toEqual(
        [...burst, ...replays].map(() => 204),
      );
    } finally {
      await secondApi.close();
      await secondSql.end();
    }

    const stored: MessageRow[] = [];
    for (const id of campaigns) stored.push(...(await messageRows(stack, id)));
    const byStatus = (status: string) => stored.filter((row) => row.deliveryStatus === status);
    expect(byStatus('delivered')).toHaveLength(rows.length - 1);
    expect(byStatus('undelivered')).toEqual([
      expect.objectContaining({ seq: first.seq, deliveryErrorCode: 'LATER' }),
    ]);
    expect(byStatus('undelivered')[0]?.deliveredAt?.toISOString()).toBe(t2);
    const reported = await stack.sql<{ delivered: number; deliveryFailed: number }[]>`
      select delivered, delivery_failed from report_batches
      where campaign_id = any(${campaigns}::bigint[]) order by campaign_id`;
    expect(reported).toEqual([
      { delivered: 149, deliveryFailed: 1 },
      { delivered: 60, deliveryFailed: 0 },
    ]);
  });
});

describe('opt-outs (marketing sends)', () => {
  async function optOut(workspaceId: number, recipients: string[]) {
    for (const recipient of recipients) {
      await stack.sql`insert into opt_outs (workspace_id, recipient) values (${workspaceId}, ${recipient})`;
    }
  }

  it('leaves opted-out numbers out of a marketing send and counts them as excluded', async () => {
    const [keep1, out1, keep2, out2] = numbers(4) as [string, string, string, string];
    await optOut(tenant.workspaceId, [out1, out2]);
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: [keep1, out1, keep2, out2], message: 'Big sale', message_purpose: 'marketing' },
      { total: 2, requested: 4, excluded: 2 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      total_recipients: 2,
      queued_count: 0,
      sent_count: 2,
      failed_count: 0,
    });
    expect((await messageRows(stack, id)).map((row) => row.recipient)).toEqual([keep1, keep2]);
    for (const recipient of [keep1, keep2]) {
      expect((await inbox(ownUrl, recipient)).map((message) => message.body)).toEqual(['Big sale']);
    }
    for (const recipient of [out1, out2]) expect(await inbox(ownUrl, recipient)).toEqual([]);

    // A transactional message still reaches an opted-out number.
    const receipt = await sendQueued(
      stack,
      tenant.token,
      { recipients: [out1], message: 'Your receipt', message_purpose: 'transactional' },
      { total: 1 },
    );
    expect(await waitForCompletion(stack, tenant.token, receipt)).toMatchObject({ sent_count: 1 });
    expect((await inbox(ownUrl, out1)).map((message) => message.body)).toEqual(['Your receipt']);
  });

  it("ignores another workspace's opt-outs", async () => {
    const other = await createTenant(stack.admin);
    const [recipient] = numbers(1) as [string];
    await optOut(other.workspaceId, [recipient]);
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: [recipient], message: 'Members only', message_purpose: 'marketing' },
      { total: 1, requested: 1, excluded: 0 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({ sent_count: 1 });
    expect(await inbox(ownUrl, recipient)).toHaveLength(1);
  });

  it('completes at once with zero counters when every recipient opted out', async () => {
    const recipients = numbers(2);
    await optOut(tenant.workspaceId, recipients);
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Nobody hears this', message_purpose: 'marketing' },
      { total: 0, requested: 2, excluded: 2 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      status: 'completed',
      total_recipients: 0,
      queued_count: 0,
      sent_count: 0,
      failed_count: 0,
      completed_at: expect.stringMatching(ISO),
    });
    for (const recipient of recipients) expect(await inbox(ownUrl, recipient)).toEqual([]);
  });
});
