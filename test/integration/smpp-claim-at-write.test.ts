/**
 * A campaign message sent through SMPP is marked as possibly sent (its attempt provider) only when
 * its submit_sm is written, in a slot of the bind's window: one still queued behind a full window
 * is not, and one accepted is recorded as sent at once, so a crash leaves unknown at most the
 * window, and a cancel still holds back what is queued. Against the local SMSC peer
 * (test/support/smsc-peer.ts), through the stack's worker.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerCreate, providerDisable } from '../../cli/admin/providers.js';
import { lookup, messageRows, numbers, sendQueued } from '../support/send.js';
import { type SmscPeer, smppProviderOptions, startSmscPeer } from '../support/smsc-peer.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const ACCOUNT = { systemId: 'herald-w', password: 'W1nd-0ws' };
const SLUG = 'narrow';

let stack: Stack;
let tenant: Tenant;
let peer: SmscPeer;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  peer = await startSmscPeer(ACCOUNT);
  // A window of one: every message but the one written waits in the client's queue.
  await providerCreate(stack.admin, {
    workspace: tenant.slug,
    slug: SLUG,
    ...smppProviderOptions(peer, ACCOUNT),
    'source-addr': 'Herald',
    window: '1',
    'messages-per-second': '2000',
  });
});

afterAll(async () => {
  await providerDisable(stack.admin, { workspace: tenant.slug, slug: SLUG }).catch(() => {});
  await peer?.close();
  await stack?.close();
});

/** The campaign's messages marked as possibly sent and not settled yet. */
async function claimedUnsettled(campaignId: number): Promise<number> {
  const [row] = await stack.sql<{ count: number }[]>`
    select count(*)::int as count from campaign_messages
    where campaign_id = ${campaignId} and status = 'queued' and attempt_provider is not null`;
  return row?.count ?? 0;
}

async function statuses(campaignId: number): Promise<string[]> {
  return (await messageRows(stack, campaignId)).map((row) => row.status);
}

function send(recipients: string[], message: string) {
  return sendQueued(
    stack,
    tenant.token,
    { recipients, message, provider_slug: SLUG },
    { total: recipients.length },
  );
}

function cancel(id: number) {
  return stack.app.inject({
    method: 'POST',
    url: `/api/v1/messages/${id}/cancel`,
    headers: { authorization: `Bearer ${tenant.token}` },
  });
}

describe('an SMPP message is claimed when its PDU is written', () => {
  it('leaves the messages queued behind a full window unclaimed, and sends each once', async () => {
    peer.responseDelayMs = 1_500;
    const recipients = numbers(4);
    const id = await send(recipients, 'Claimed in the window');
    await expect.poll(() => claimedUnsettled(id), { timeout: 15_000, interval: 20 }).toBe(1);
    // The first PDU holds the only slot for 1.5 s: the other three wait in the queue, unclaimed.
    await sleep(700);
    expect(await claimedUnsettled(id)).toBe(1);
    // Its acceptance is recorded as it comes, not with the batch: a crash now leaves unknown only
    // the one PDU in the window.
    await expect.poll(() => statuses(id), { timeout: 15_000, interval: 20 }).toContain('sent');
    expect(await claimedUnsettled(id)).toBeLessThanOrEqual(1);
    expect(
      (await statuses(id)).filter((status) => status === 'queued').length,
    ).toBeGreaterThanOrEqual(2);
    peer.responseDelayMs = 0;

    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).status, { timeout: 30_000 })
      .toBe('completed');
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      sent_count: 4,
      failed_count: 0,
    });
    for (const recipient of recipients) expect(peer.messagesTo(recipient)).toHaveLength(1);
    expect(peer.problems).toEqual([]);
  });

  it('writes nothing of the queued messages of a campaign canceled meanwhile', async () => {
    peer.responseDelayMs = 2_000;
    const recipients = numbers(5);
    const id = await send(recipients, 'Canceled in the queue');
    await expect.poll(() => claimedUnsettled(id), { timeout: 15_000, interval: 20 }).toBe(1);
    const partsBefore = peer.parts.length;
    expect((await cancel(id)).statusCode).toBe(200);
    peer.responseDelayMs = 0;

    // The PDU in flight is answered; the four still queued are never written.
    await expect
      .poll(async () => (await messageRows(stack, id)).map((row) => row.status).sort(), {
        timeout: 30_000,
      })
      .toEqual(['canceled', 'canceled', 'canceled', 'canceled', 'sent']);
    await sleep(500);
    expect(peer.parts.length - partsBefore).toBe(1);
    const reached = recipients.filter((recipient) => peer.messagesTo(recipient).length > 0);
    expect(reached).toHaveLength(1);
    const rows = await messageRows(stack, id);
    expect(rows.find((row) => row.status === 'sent')?.recipient).toBe(reached[0]);
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      status: 'canceled',
      sent_count: 1,
      canceled_count: 4,
    });
  });
});
