/**
 * GET /api/v1/messages/{campaign}/recipients (issue 27, item 3) on the real stack: each recipient's
 * status from its message row, its delivery receipt, or its exclusion at send time; keyset pages;
 * the 422s and 404s; masked numbers without `recipients:read`; `herald campaign recipients`.
 *
 * Receipts must reach Herald, so this file runs a worker of its own in a namespace of its own,
 * whose `own` provider is a simulator of the file's, and whose PUBLIC_URL is this file's api,
 * listening: the simulator posts every receipt there, as a provider would.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { campaignRecipients } from '../../cli/admin/campaign-recipients.js';
import { UsageError } from '../../cli/output.js';
import { eraseRecipientNumber } from '../../commands/messaging/recipient-erasure.js';
import { optOut } from '../../db/opt-outs.js';
import { insertProvider } from '../../db/providers.js';
import { dropCampaignPersonalData } from '../../db/retention.js';
import { maskedNumber } from '../../domain/phone.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { type RunningWorker, startHeraldWorker } from '../../server/worker.js';
import { TEST_OPERATOR } from '../support/actors.js';
import {
  type InboxMessage,
  numbers,
  postMessages,
  saveDirectCampaign,
  setBehaviour,
  waitForCompletion,
} from '../support/send.js';
import {
  createTenant,
  openStack,
  PUBLIC_URL,
  registerTestNamespace,
  type Stack,
  type Tenant,
} from '../support/stack.js';

const namespace = `herald-recipients-${Date.now()}`;

interface Listed {
  recipient: string;
  status: string;
  error_code: string | null;
  provider: string | null;
  sent_at: string | null;
  receipt_at: string | null;
}
interface Listing {
  data: { recipients: Listed[]; next_cursor: string | null };
}

let stack: Stack;
let tenant: Tenant;
let other: Tenant;
let carrier: RunningSimulator;
let worker: RunningWorker;
/** messages:read and recipients:read; messages:read alone. */
let fullKey: string;
let maskedKey: string;

function get(token: string, campaign: number | string, query = '') {
  return stack.app.inject({
    method: 'GET',
    url: `/api/v1/messages/${campaign}/recipients${query}`,
    headers: { authorization: `Bearer ${token}` },
  });
}

async function listing(token: string, campaign: number, query = ''): Promise<Listing> {
  const response = await get(token, campaign, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/**
 * Sends and returns the campaign id, checking only what this file relies on (the campaign object
 * itself is the send's to test): the counts of recipients queued and left out.
 */
async function send(body: Record<string, unknown>, queued: { total: number; excluded?: number }) {
  const response = await postMessages(stack, fullKey, body);
  expect(response.statusCode, response.body).toBe(202);
  const { queue } = response.json().data;
  expect(queue).toMatchObject({
    success: true,
    total_recipients: queued.total,
    excluded_recipients: queued.excluded ?? 0,
  });
  return queue.campaign_id as number;
}

/** Every page, following next_cursor from the first. */
async function allPages(token: string, campaign: number, query: string) {
  const pages: Listing['data'][] = [];
  let cursor: string | null = null;
  do {
    const suffix: string = cursor ? `&cursor=${cursor}` : '';
    const page: Listing = await listing(token, campaign, `?${query}${suffix}`);
    pages.push(page.data);
    cursor = page.data.next_cursor;
  } while (cursor && pages.length < 100);
  return pages;
}

/** The message rows' times, as the listing should give them. */
async function timesOf(campaign: number) {
  const rows = await stack.sql<{ recipient: string; submittedAt: Date | null }[]>`
    select recipient, submitted_at from campaign_messages where campaign_id = ${campaign}`;
  return new Map(rows.map((row) => [row.recipient, row.submittedAt?.toISOString() ?? null]));
}

/** The simulator's own view of a message: its receipt status, code and time. */
async function simulated(reference: string) {
  const response = await fetch(`${carrier.url}/v1/messages?reference=${reference}`);
  const { messages } = (await response.json()) as {
    messages: { to: string; status: string; error_code: string | null; status_at: string | null }[];
  };
  return messages;
}

beforeAll(async () => {
  await registerTestNamespace(namespace);
  stack = await openStack(namespace);
  tenant = await createTenant(stack.admin);
  other = await createTenant(stack.admin);
  fullKey = (await tenant.keyWith(['messages:send', 'messages:read', 'recipients:read'])).token;
  maskedKey = (await tenant.keyWith(['messages:read'])).token;
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = stack.app.server.address() as AddressInfo;
  carrier = await startSimulator({ port: 0 });
  worker = await startHeraldWorker({
    address: inject('temporalAddress'),
    namespace,
    sql: stack.sql,
    ownProviderUrl: carrier.url,
    publicUrl: `http://127.0.0.1:${port}`,
    secret: inject('secret'),
    webhookDispatcher: false,
  });
}, 120_000);

afterAll(async () => {
  await worker?.shutdown();
  await carrier?.close();
  await stack?.close();
}, 60_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('a campaign of every outcome', () => {
  // Given in this order: delivered, undelivered, refused, opted out, no receipt.
  const [delivered, undelivered, refused, optedOut, unreceipted] = numbers(5) as [
    string,
    string,
    string,
    string,
    string,
  ];
  let campaign: number;

  it('is sent, and its receipts come back', async () => {
    await setBehaviour(carrier.url, {
      prefix: undelivered,
      receipt: { outcome: 'undelivered', error_code: 'EC_ABSENT', delay_ms: 0 },
    });
    await setBehaviour(carrier.url, { prefix: refused, outcome: 'reject' });
    await setBehaviour(carrier.url, { prefix: unreceipted, receipt: { outcome: 'none' } });
    await optOut(stack.sql, tenant.workspaceId, optedOut, 'reply');
    campaign = await send(
      {
        recipients: [delivered, undelivered, refused, optedOut, unreceipted],
        message: 'Spring sale',
        message_purpose: 'marketing',
      },
      { total: 4, excluded: 1 },
    );
    await waitForCompletion(stack, fullKey, campaign);
    await expect
      .poll(async () => (await listing(fullKey, campaign, '?status=sent')).data.recipients.length, {
        timeout: 15_000,
      })
      .toBe(1);
  });

  it('lists each recipient with its exact status, in the order given, exclusions last', async () => {
    const sentAt = await timesOf(campaign);
    const [receiptOf] = await simulated(`cmp-${campaign}-1`);
    const [undeliveredReceipt] = await simulated(`cmp-${campaign}-2`);
    expect(await listing(fullKey, campaign)).toEqual({
      data: {
        recipients: [
          {
            recipient: delivered,
            status: 'delivered',
            error_code: null,
            provider: 'own',
            sent_at: sentAt.get(delivered),
            receipt_at: receiptOf?.status_at,
          },
          {
            recipient: undelivered,
            status: 'undelivered',
            error_code: 'EC_ABSENT',
            provider: 'own',
            sent_at: sentAt.get(undelivered),
            receipt_at: undeliveredReceipt?.status_at,
          },
          {
            recipient: refused,
            status: 'failed',
            error_code: `own: Destination ${refused} rejected.`,
            provider: null,
            sent_at: null,
            receipt_at: null,
          },
          {
            recipient: unreceipted,
            status: 'sent',
            error_code: null,
            provider: 'own',
            sent_at: sentAt.get(unreceipted),
            receipt_at: null,
          },
          {
            recipient: optedOut,
            status: 'excluded',
            error_code: 'opted_out',
            provider: null,
            sent_at: null,
            receipt_at: null,
          },
        ],
        next_cursor: null,
      },
    });
    expect(sentAt.get(delivered)).toMatch(ISO);
    expect(receiptOf?.status_at).toMatch(ISO);
  });

  it('masks every number, and a number quoted in an error, without recipients:read', async () => {
    const full = await listing(fullKey, campaign);
    expect(await listing(maskedKey, campaign)).toEqual({
      data: {
        recipients: full.data.recipients.map((row) => ({
          ...row,
          recipient: maskedNumber(row.recipient),
          error_code: row.error_code?.replace(row.recipient, maskedNumber(row.recipient)) ?? null,
        })),
        next_cursor: null,
      },
    });
    const [failed] = (await listing(maskedKey, campaign, '?status=failed')).data.recipients;
    expect(failed).toEqual({
      recipient: `•••• ${refused.slice(-4)}`,
      status: 'failed',
      error_code: `own: Destination •••• ${refused.slice(-4)} rejected.`,
      provider: null,
      sent_at: null,
      receipt_at: null,
    });
  });

  it('filters by status', async () => {
    const statuses = async (status: string) =>
      (await listing(fullKey, campaign, `?status=${status}`)).data.recipients.map((row) => [
        row.recipient,
        row.status,
      ]);
    expect(await statuses('delivered')).toEqual([[delivered, 'delivered']]);
    expect(await statuses('undelivered')).toEqual([[undelivered, 'undelivered']]);
    expect(await statuses('failed')).toEqual([[refused, 'failed']]);
    expect(await statuses('sent')).toEqual([[unreceipted, 'sent']]);
    expect(await statuses('excluded')).toEqual([[optedOut, 'excluded']]);
    expect(await statuses('queued')).toEqual([]);
    expect(await statuses('canceled')).toEqual([]);
  });

  it('keeps an erased number erased, in messages and exclusions, even with recipients:read', async () => {
    await eraseRecipientNumber(
      stack.admin,
      { number: undelivered, workspace: tenant.slug },
      TEST_OPERATOR,
    );
    await eraseRecipientNumber(
      stack.admin,
      { number: optedOut, workspace: tenant.slug },
      TEST_OPERATOR,
    );
    const rows = (await listing(fullKey, campaign)).data.recipients;
    expect(rows.map((row) => row.recipient)).toEqual([
      delivered,
      maskedNumber(undelivered),
      refused,
      unreceipted,
      maskedNumber(optedOut),
    ]);
    // Its opt-out is kept as a keyed hash: a later send leaves it out, stored masked only.
    const later = await send(
      { recipients: [optedOut, delivered], message: 'Summer sale', message_purpose: 'marketing' },
      { total: 1, excluded: 1 },
    );
    expect((await listing(fullKey, later, '?status=excluded')).data.recipients).toEqual([
      {
        recipient: maskedNumber(optedOut),
        status: 'excluded',
        error_code: 'opted_out',
        provider: null,
        sent_at: null,
        receipt_at: null,
      },
    ]);
    const stored = await stack.sql`
      select recipient from campaign_exclusions where recipient like ${`%${optedOut.slice(1)}%`}`;
    expect(stored).toEqual([]);
  });

  it('is what `herald campaign recipients` prints with --json, full numbers', async () => {
    const { json } = await campaignRecipients(stack.admin, {
      id: String(campaign),
      status: 'delivered',
      limit: '10',
      json: true,
    });
    expect(json).toEqual((await listing(fullKey, campaign, '?status=delivered&limit=10')).data);
    await expect(
      campaignRecipients(stack.admin, { id: String(campaign), status: 'lost', limit: '0' }),
    ).rejects.toThrow(
      new UsageError('The selected status is invalid. The limit field must be between 1 and 1000.'),
    );
    await expect(campaignRecipients(stack.admin, { id: '999999999' })).rejects.toThrow(
      new UsageError('There is no campaign 999999999'),
    );
  });
});

describe('statuses the send has not settled', () => {
  const unsent = (status: string) => (recipient: string) => ({
    recipient,
    status,
    error_code: null,
    provider: null,
    sent_at: null,
    receipt_at: null,
  });

  it('queued for a campaign not dispatched', async () => {
    const recipients = numbers(3);
    const campaign = await saveDirectCampaign(stack, tenant.workspaceId, {
      body: 'Held',
      providerSlug: null,
      recipients,
    });
    expect((await listing(fullKey, campaign)).data.recipients).toEqual(
      recipients.map(unsent('queued')),
    );
  });

  it('canceled for a scheduled campaign canceled, as many as its canceled_count', async () => {
    const recipients = numbers(4);
    const [optedOut] = numbers(1) as [string];
    await optOut(stack.sql, tenant.workspaceId, optedOut, 'operator');
    const campaign = await send(
      {
        recipients: [...recipients, optedOut],
        message: 'Later, then never',
        message_purpose: 'marketing',
        send_at: new Date(Date.now() + 10 * 60_000).toISOString(),
      },
      { total: 4, excluded: 1 },
    );
    const canceled = await stack.app.inject({
      method: 'POST',
      url: `/api/v1/messages/${campaign}/cancel`,
      headers: { authorization: `Bearer ${fullKey}` },
    });
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.json().data.message.canceled_count).toBe(4);
    expect(await listing(fullKey, campaign)).toEqual({
      data: {
        recipients: [
          ...recipients.map(unsent('canceled')),
          { ...unsent('excluded')(optedOut), error_code: 'opted_out' },
        ],
        next_cursor: null,
      },
    });
  });
});

describe('retention', () => {
  it('leaves a campaign past RETENTION_DAYS listed with every number masked, exclusions too', async () => {
    const [kept, optedOut] = numbers(2) as [string, string];
    await optOut(stack.sql, tenant.workspaceId, optedOut, 'operator');
    const campaign = await send(
      { recipients: [optedOut, kept], message: 'Old news', message_purpose: 'marketing' },
      { total: 1, excluded: 1 },
    );
    await waitForCompletion(stack, fullKey, campaign);
    await stack.sql`
      update campaigns set created_at = now() - interval '100 days' where id = ${campaign}`;
    await expect.poll(() => dropCampaignPersonalData(stack.sql, 90, 1_000)).toBeGreaterThan(0);
    const listed = (await listing(fullKey, campaign)).data.recipients;
    expect(listed.map((row) => [row.recipient, row.status])).toEqual([
      [maskedNumber(kept), expect.stringMatching(/^(sent|delivered)$/)],
      [maskedNumber(optedOut), 'excluded'],
    ]);
  });
});

describe('keyset pages', () => {
  let campaign: number;
  let recipients: string[];
  const excluded = new Set<string>();

  beforeAll(async () => {
    recipients = numbers(23);
    for (const index of [0, 7, 22]) {
      excluded.add(recipients[index] as string);
      await optOut(stack.sql, tenant.workspaceId, recipients[index] as string, 'operator');
    }
    campaign = await saveDirectCampaign(stack, tenant.workspaceId, {
      body: 'Paged',
      providerSlug: null,
      recipients,
      purpose: 'marketing',
    });
  });

  it('cover every recipient exactly once, whatever the page size', async () => {
    const order = [
      ...recipients.filter((number) => !excluded.has(number)),
      ...recipients.filter((number) => excluded.has(number)),
    ];
    for (const limit of [1, 4, 5, 23, 1000]) {
      const pages = await allPages(fullKey, campaign, `limit=${limit}`);
      expect(pages.length, `limit ${limit}`).toBe(Math.ceil(23 / limit));
      expect(pages.at(-1)?.next_cursor).toBeNull();
      for (const page of pages.slice(0, -1)) expect(page.recipients).toHaveLength(limit);
      expect(pages.flatMap((page) => page.recipients.map((row) => row.recipient))).toEqual(order);
    }
  });

  it('page under a status filter, and default to 100', async () => {
    const pages = await allPages(fullKey, campaign, 'status=queued&limit=6');
    expect(pages.map((page) => page.recipients.length)).toEqual([6, 6, 6, 2]);
    const statuses = new Set(pages.flatMap((page) => page.recipients.map((row) => row.status)));
    expect([...statuses]).toEqual(['queued']);
    const excludedPages = await allPages(fullKey, campaign, 'status=excluded&limit=2');
    expect(excludedPages.flatMap((page) => page.recipients.map((row) => row.recipient))).toEqual([
      recipients[0],
      recipients[7],
      recipients[22],
    ]);

    const many = await saveDirectCampaign(stack, tenant.workspaceId, {
      body: 'Many',
      providerSlug: null,
      recipients: numbers(101),
    });
    const first = await listing(fullKey, many);
    expect(first.data.recipients).toHaveLength(100);
    expect(first.data.next_cursor).toBe(Buffer.from('100').toString('base64url'));
    const second = await listing(fullKey, many, `?cursor=${first.data.next_cursor}`);
    expect(second.data.recipients).toHaveLength(1);
    expect(second.data.next_cursor).toBeNull();
  });
});

describe('refusals', () => {
  let campaign: number;

  beforeAll(async () => {
    campaign = await saveDirectCampaign(stack, tenant.workspaceId, {
      body: 'Refusals',
      providerSlug: null,
      recipients: numbers(2),
    });
  });

  const invalid = (errors: Record<string, string[]>) => {
    const all = Object.values(errors).flat();
    const more = all.length - 1;
    return {
      message: more > 0 ? `${all[0]} (and ${more} more error${more === 1 ? '' : 's'})` : all[0],
      errors,
    };
  };
  const STATUS = 'The selected status is invalid.';
  const CURSOR = 'The cursor field format is invalid.';
  const RANGE = 'The limit field must be between 1 and 1000.';
  const INTEGER = 'The limit field must be an integer.';

  it.each([
    ['?status=bounced', { status: [STATUS] }],
    ['?status=', { status: [STATUS] }],
    ['?status=DELIVERED', { status: [STATUS] }],
    ['?status=sent&status=failed', { status: ['The status field must be a string.'] }],
    ['?cursor=not-a-cursor', { cursor: [CURSOR] }],
    ['?cursor=', { cursor: [CURSOR] }],
    // base64url of "0", of "-1", of "abc", and "100" spelled with padding.
    [`?cursor=${Buffer.from('0').toString('base64url')}`, { cursor: [CURSOR] }],
    [`?cursor=${Buffer.from('-1').toString('base64url')}`, { cursor: [CURSOR] }],
    [`?cursor=${Buffer.from('abc').toString('base64url')}`, { cursor: [CURSOR] }],
    ['?cursor=MTAw%3D', { cursor: [CURSOR] }],
    [`?cursor=${Buffer.from('2147483648').toString('base64url')}`, { cursor: [CURSOR] }],
    ['?limit=0', { limit: [RANGE] }],
    ['?limit=1001', { limit: [RANGE] }],
    ['?limit=-5', { limit: [INTEGER] }],
    ['?limit=2.5', { limit: [INTEGER] }],
    ['?limit=ten', { limit: [INTEGER] }],
    ['?limit=', { limit: [INTEGER] }],
    ['?limit=007', { limit: [INTEGER] }],
    ['?status=lost&cursor=%2F%2F&limit=0', { status: [STATUS], cursor: [CURSOR], limit: [RANGE] }],
  ])('422 for %s', async (query, errors) => {
    const response = await get(fullKey, campaign, query);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(invalid(errors));
  });

  it("404 in docs/spec.md's shape (§2.4) for another workspace's campaign, a malformed or unknown id", async () => {
    for (const id of [String(campaign), 'abc', '0', '999999999999']) {
      const token = id === String(campaign) ? other.token : fullKey;
      const response = await get(token, id);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual({
        title: 'Not Found',
        detail: `Campaign ${id} was not found.`,
        instance: `${PUBLIC_URL}/api/v1/messages/${id}/recipients`,
        code: 'NOT-404',
        link: '',
      });
    }
  });

  it('403 for a key without messages:read, recipients:read alone included', async () => {
    const { token } = await tenant.keyWith(['messages:send', 'recipients:read']);
    const response = await get(token, campaign);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      message: 'This API key does not have the "messages:read" ability.',
    });
  });
});

describe('a 1,000-recipient campaign with 10 % undelivered', () => {
  it("agrees, for every recipient, with the simulator's inbox and receipts", {
    timeout: 180_000,
  }, async () => {
    const recipients = numbers(1000);
    const undelivered = new Set(recipients.filter((_, index) => index % 10 === 3));
    // The carrier's simulator as a provider of the workspace, paced as a real one would be:
    // the api, the worker and the simulator share this process, and an unpaced burst can starve
    // a submission's answer past its 10 s timeout (an outcome unknown, then failed).
    await insertProvider(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug: 'paced',
      name: 'Paced',
      type: 'simulator',
      requiresSenderId: false,
      messagesPerSecond: 200,
      settings: { base_url: carrier.url },
    });
    for (const number of undelivered)
      await setBehaviour(carrier.url, {
        prefix: number,
        receipt: { outcome: 'undelivered', error_code: 'EC_SUBSCRIBER_ABSENT', delay_ms: 1_000 },
      });
    await setBehaviour(carrier.url, { receipt: { delay_ms: 1_000 } });
    const campaign = await send(
      { recipients, message: 'A thousand of you', provider_slug: 'paced' },
      { total: 1000 },
    );
    await waitForCompletion(stack, fullKey, campaign);
    // Receipts follow the last submission by a second.
    await expect
      .poll(
        async () => (await listing(fullKey, campaign, '?status=sent&limit=1')).data.recipients,
        { timeout: 60_000, interval: 250 },
      )
      .toEqual([]);

    const pages = await allPages(fullKey, campaign, 'limit=300');
    expect(pages.map((page) => page.recipients.length)).toEqual([300, 300, 300, 100]);
    const listed = pages.flatMap((page) => page.recipients);
    expect(listed.map((row) => row.recipient)).toEqual(recipients);

    const response = await fetch(`${carrier.url}/v1/inbox`);
    const { messages } = (await response.json()) as { messages: InboxMessage[] };
    const inboxOf = new Map<string, InboxMessage[]>();
    for (const message of messages)
      if (message.reference.startsWith(`cmp-${campaign}-`))
        inboxOf.set(message.to, [...(inboxOf.get(message.to) ?? []), message]);
    expect(inboxOf.size).toBe(1000);

    const sentAt = await timesOf(campaign);
    for (const [index, row] of listed.entries()) {
      const received = inboxOf.get(row.recipient) ?? [];
      // Exactly once in the inbox, under its own reference, with the campaign's text.
      expect(received.map(({ body, reference }) => ({ body, reference }))).toEqual([
        { body: 'A thousand of you', reference: `cmp-${campaign}-${index + 1}` },
      ]);
      const [receipt] = await simulated(`cmp-${campaign}-${index + 1}`);
      expect(row).toEqual({
        recipient: row.recipient,
        status: receipt?.status,
        error_code: receipt?.error_code,
        provider: 'paced',
        sent_at: sentAt.get(row.recipient),
        receipt_at: receipt?.status_at,
      });
      expect(row.status).toBe(undelivered.has(row.recipient) ? 'undelivered' : 'delivered');
    }
    const counts = async (status: string) =>
      (await allPages(fullKey, campaign, `status=${status}&limit=1000`)).flatMap(
        (page) => page.recipients,
      ).length;
    expect({
      delivered: await counts('delivered'),
      undelivered: await counts('undelivered'),
    }).toEqual({ delivered: 900, undelivered: 100 });
  });
});
