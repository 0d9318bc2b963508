/**
 * Campaigns and OTPs through an SMPP provider on the real stack, against the local SMSC peer
 * (test/support/smsc-peer.ts): the shared worker binds to the peer as a transceiver; every
 * recipient reaches the SMSC exactly once, long texts as reassembled UDH parts; deliver_sm
 * receipts flow into the messages and the reporting table (also when they overtake settlement,
 * repeat, or come out of order); replies opt recipients out and in; throttling, an SMSC unbind and
 * an abrupt drop mid-campaign lose nothing and send nothing twice; a Twilio rejection fails over
 * to SMPP; a wrong password fails the messages with the SMSC's reason.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSmppSessions } from '../../activities/smpp-binds.js';
import { providerCreate, providerDisable, routeCreate } from '../../cli/admin/providers.js';
import { UsageError } from '../../cli/output.js';
import { findActiveSmppProviders } from '../../db/smpp.js';
import { countSegments } from '../../domain/segments.js';
import { decryptCredentials, providerCredentialsContext } from '../../security/credentials.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
import {
  lookup,
  messageRows,
  numbers,
  reportCounts,
  sendQueued,
  waitForCompletion,
} from '../support/send.js';
import { type ReceiptStep, type SmscPeer, startSmscPeer } from '../support/smsc-peer.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import { startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';

const ACCOUNT = { systemId: 'herald-t', password: 'Sm9p-x1k' };
const OUTCOME_UNKNOWN = 'outcome unknown: the SMPP connection closed before the SMSC answered';

let stack: Stack;
let tenant: Tenant;
let peer: SmscPeer;
const peers: SmscPeer[] = [];
let twilio: TwilioPeer;
/** Providers the shared worker binds to: disabled at the end, so it lets their binds go. */
const created: { workspace: string; slug: string }[] = [];

async function smppProvider(
  owner: Tenant,
  slug: string,
  target: SmscPeer,
  extra: Record<string, string | boolean> = {},
) {
  const result = await providerCreate(stack.admin, {
    workspace: owner.slug,
    slug,
    type: 'smpp',
    host: target.host,
    port: String(target.port),
    'system-id': ACCOUNT.systemId,
    password: ACCOUNT.password,
    'source-addr': 'Herald',
    // Far above what these tests send: pacing is not what they are about.
    'messages-per-second': '2000',
    ...extra,
  });
  created.push({ workspace: owner.slug, slug });
  return result;
}

async function sendSmpp(
  recipients: string[],
  message: string,
  extra: Record<string, unknown> = {},
  token = tenant.token,
) {
  const id = await sendQueued(
    stack,
    token,
    { recipients, message, provider_slug: 'smsc', ...extra },
    { total: recipients.length },
  );
  await waitForCompletion(stack, token, id);
  return id;
}

function peerMessageTo(recipient: string, target = peer) {
  const matches = target.messagesTo(recipient);
  expect(matches).toHaveLength(1);
  return matches[0] as (typeof matches)[number];
}

async function receipted(campaignId: number): Promise<number> {
  const [row] = await stack.sql<{ count: number }[]>`
    select count(*)::int as count from campaign_messages
    where campaign_id = ${campaignId} and delivery_status is not null`;
  return row?.count ?? 0;
}

async function pendingReceipts(workspaceId: number): Promise<number> {
  const [row] = await stack.sql<{ count: number }[]>`
    select count(*)::int as count from smpp_pending_receipts where workspace_id = ${workspaceId}`;
  return row?.count ?? 0;
}

/** A time on a whole minute, as a receipt's `done date` (YYMMDDhhmm) can carry it. */
function minute(offset: number, base = Date.now()) {
  return new Date(Math.floor(base / 60_000) * 60_000 + offset * 60_000);
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  peer = await startSmscPeer(ACCOUNT);
  peers.push(peer);
  await smppProvider(tenant, 'smsc', peer);
});

afterAll(async () => {
  for (const { workspace, slug } of created)
    await providerDisable(stack.admin, { workspace, slug }).catch(() => {});
  for (const each of peers) await each.close();
  await twilio?.close();
  await stack?.close();
});

describe('a campaign through an SMPP provider', () => {
  it('reaches the SMSC once per recipient, and its receipts come back into the reports', async () => {
    const recipients = numbers(1000);
    const text = 'Your parcel is on its way: track it with code 7F3A.';
    const id = await sendSmpp(recipients, text);
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      status: 'completed',
      total_recipients: 1000,
      queued_count: 0,
      sent_count: 1000,
      failed_count: 0,
    });
    const rows = await messageRows(stack, id);
    expect(rows).toHaveLength(1000);
    for (const row of rows) {
      const message = peerMessageTo(row.recipient);
      expect(row).toMatchObject({
        status: 'sent',
        providerSlug: 'smsc',
        providerMessageId: message.messageId,
        error: null,
      });
      expect(message).toMatchObject({
        partIds: [message.messageId],
        text,
        from: 'Herald',
        sourceTon: 5,
        sourceNpi: 0,
        dataCoding: 0,
      });
    }
    await expect.poll(() => receipted(id), { timeout: 20_000, interval: 200 }).toBe(1000);
    expect(new Set((await messageRows(stack, id)).map((row) => row.deliveryStatus))).toEqual(
      new Set(['delivered']),
    );
    expect(await reportCounts(stack, id)).toEqual({
      sent: 1000,
      failedToSend: 0,
      delivered: 1000,
      deliveryFailed: 0,
    });
    expect(await pendingReceipts(tenant.workspaceId)).toBe(0);
    expect(peer.problems).toEqual([]);
    expect(peer.deliveryAnswers.filter((status) => status !== 0)).toEqual([]);
    // The campaign's validity period travels as validity_period, to the second.
    const [{ validUntil }] = (await stack.sql`
      select valid_until from campaigns where id = ${id}`) as unknown as [{ validUntil: Date }];
    const validSecond = Math.floor(validUntil.getTime() / 1000) * 1000;
    const sentTo = new Set(recipients.map((recipient) => recipient.slice(1)));
    const validity = new Set(
      peer.parts.filter((part) => sentTo.has(part.to)).map((part) => part.validUntil?.getTime()),
    );
    expect(validity).toEqual(new Set([validSecond]));
  });

  it("sends a message's own sender id, else the provider's, with the TON/NPI of its kind", async () => {
    const [named, numbered] = numbers(2) as [string, string];
    await sendSmpp([named], 'Named sender', { sender_id: 'ACME Co' });
    expect(peerMessageTo(named)).toMatchObject({ from: 'ACME Co', sourceTon: 5, sourceNpi: 0 });
    // Another workspace, with an SMSC of its own (receipts go to the account that bound).
    const other = await createTenant(stack.admin);
    const otherPeer = await startSmscPeer(ACCOUNT);
    peers.push(otherPeer);
    await smppProvider(other, 'smsc', otherPeer, { 'source-addr': '+61400000123' });
    await sendSmpp([numbered], 'Numbered sender', {}, other.token);
    expect(peerMessageTo(numbered, otherPeer)).toMatchObject({
      from: '61400000123',
      sourceTon: 1,
      sourceNpi: 1,
    });
  });

  it('keeps the right final state for receipts that overtake settlement, repeat, or come out of order', async () => {
    const recipients = numbers(7);
    const [a, b, c, d, e, f, held] = recipients as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const base = Date.now();
    const plans: [string, ReceiptStep[]][] = [
      // Out of order: the older UNDELIV arrives after the newer DELIVRD.
      [
        a,
        [
          { stat: 'DELIVRD', doneAt: minute(2, base) },
          { stat: 'UNDELIV', err: '012', doneAt: minute(1, base) },
        ],
      ],
      // The same receipt twice.
      [
        b,
        [
          { stat: 'UNDELIV', err: '012', doneAt: minute(0, base) },
          { stat: 'UNDELIV', err: '012', doneAt: minute(0, base) },
        ],
      ],
      // An intermediate state, then the final one.
      [c, [{ stat: 'ENROUTE' }, { stat: 'EXPIRED', err: '000', doneAt: minute(1, base) }]],
      // A state Herald cannot map: kept as unknown, with the SMSC's word for it.
      [d, [{ stat: 'FOOBAR', err: '000', doneAt: minute(1, base) }]],
      // TLVs only: no done date, so the time it arrived.
      [e, [{ stat: 'DELIVRD', format: 'tlv' }]],
      // Text only.
      [f, [{ stat: 'REJECTD', err: '003', format: 'text', doneAt: minute(0, base) }]],
    ];
    for (const [to, steps] of plans) {
      peer.receiptsFor(to, steps);
      // Receipts sent before the submission is answered arrive before its message is settled.
      peer.receiptsBeforeAnswer(to);
      peer.delayAnswer(to, 2_500);
    }
    peer.delayAnswer(held, 3_000);
    const before = Date.now();
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Receipts', provider_slug: 'smsc' },
      { total: 7 },
    );
    await expect
      .poll(() => pendingReceipts(tenant.workspaceId), { timeout: 2_500, interval: 50 })
      .toBe(6);
    expect((await messageRows(stack, id)).map((row) => row.status)).toEqual(
      recipients.map(() => 'queued'),
    );
    await waitForCompletion(stack, tenant.token, id);
    await expect.poll(() => receipted(id), { timeout: 10_000 }).toBe(7);
    const rows = new Map((await messageRows(stack, id)).map((row) => [row.recipient, row]));
    const state = (to: string) => {
      const row = rows.get(to);
      return [row?.deliveryStatus, row?.deliveryErrorCode, row?.deliveredAt?.toISOString()];
    };
    expect(state(a)).toEqual(['delivered', null, minute(2, base).toISOString()]);
    expect(state(b)).toEqual(['undelivered', 'UNDELIV:012', minute(0, base).toISOString()]);
    expect(state(c)).toEqual(['undelivered', 'EXPIRED:000', minute(1, base).toISOString()]);
    expect(state(d)).toEqual(['unknown', 'FOOBAR:000', minute(1, base).toISOString()]);
    expect(state(e).slice(0, 2)).toEqual(['delivered', null]);
    expect(rows.get(e)?.deliveredAt?.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(state(f)).toEqual(['undelivered', 'REJECTD:003', minute(0, base).toISOString()]);
    expect(state(held).slice(0, 2)).toEqual(['delivered', null]);
    expect(await pendingReceipts(tenant.workspaceId)).toBe(0);
    expect(await reportCounts(stack, id)).toEqual({
      sent: 7,
      failedToSend: 0,
      delivered: 3,
      deliveryFailed: 3,
    });

    // After settlement: an older receipt changes nothing, a newer one wins.
    expect(
      await peer.sendReceipt(peerMessageTo(a), { stat: 'UNDELIV', doneAt: minute(1, base) }),
    ).toBe(0);
    expect(
      await peer.sendReceipt(peerMessageTo(b), { stat: 'DELIVRD', doneAt: minute(5, base) }),
    ).toBe(0);
    const after = new Map((await messageRows(stack, id)).map((row) => [row.recipient, row]));
    expect(after.get(a)?.deliveryStatus).toBe('delivered');
    expect(after.get(b)).toMatchObject({
      deliveryStatus: 'delivered',
      deliveryErrorCode: null,
      deliveredAt: minute(5, base),
    });
    expect(await reportCounts(stack, id)).toEqual({
      sent: 7,
      failedToSend: 0,
      delivered: 4,
      deliveryFailed: 2,
    });
  });

  it('sends long texts as UDH parts that reassemble to the exact text, in GSM-7 and UCS-2', async () => {
    const [gsmTo, ucsTo] = numbers(2) as [string, string];
    // The € (two septets) would straddle the end of the first part: it opens the second.
    const gsm = `${'A'.repeat(152)}€ {braces} [brackets] ~tilde~ |pipe| ^caret^ \\ ${'z'.repeat(180)}`;
    const ucs = `Привет! 👋🏽 Ваш заказ 42 готов. ${'Спасибо, что выбрали нас 🙏 '.repeat(5)}`;
    expect(countSegments(gsm)).toEqual({ encoding: 'GSM-7', segments: 3 });
    expect(countSegments(ucs).encoding).toBe('UCS-2');
    // A receipt for the second part only: it still reaches the message.
    peer.receiptsFor(gsmTo, [{ stat: 'UNDELIV', err: '001', part: 2, doneAt: minute(0) }]);
    peer.receiptsFor(ucsTo, [{ stat: 'DELIVRD', part: 3, doneAt: minute(0) }]);
    const gsmId = await sendSmpp([gsmTo], gsm);
    const ucsId = await sendSmpp([ucsTo], ucs);

    const gsmMessage = peerMessageTo(gsmTo);
    expect(gsmMessage).toMatchObject({ text: gsm, dataCoding: 0 });
    expect(gsmMessage.partIds).toHaveLength(3);
    const gsmParts = peer.parts.filter((part) => gsmMessage.partIds.includes(part.messageId));
    expect(gsmParts.map((part) => part.text.startsWith('€'))).toEqual([false, true, false]);
    expect(gsmParts.map((part) => part.udh)).toEqual(
      [1, 2, 3].map((seq) => ({
        reference: gsmParts[0]?.udh?.reference,
        total: 3,
        seq,
      })),
    );

    const ucsMessage = peerMessageTo(ucsTo);
    expect(ucsMessage).toMatchObject({ text: ucs, dataCoding: 8 });
    expect(ucsMessage.partIds).toHaveLength(countSegments(ucs).segments);

    expect(await messageRows(stack, gsmId)).toMatchObject([
      { status: 'sent', providerMessageId: gsmMessage.messageId },
    ]);
    expect(await messageRows(stack, ucsId)).toMatchObject([
      { status: 'sent', providerMessageId: ucsMessage.messageId },
    ]);
    await expect.poll(() => receipted(gsmId)).toBe(1);
    await expect.poll(() => receipted(ucsId)).toBe(1);
    expect(await messageRows(stack, gsmId)).toMatchObject([
      { deliveryStatus: 'undelivered', deliveryErrorCode: 'UNDELIV:001' },
    ]);
    expect(await messageRows(stack, ucsId)).toMatchObject([{ deliveryStatus: 'delivered' }]);
    expect(peer.problems).toEqual([]);
  });

  it('backs off when the SMSC throttles, and every message still arrives once', async () => {
    const throttledBefore = peer.answered.ESME_RTHROTTLED ?? 0;
    peer.throttle(25);
    const recipients = numbers(60);
    const id = await sendSmpp(recipients, 'Throttled');
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      sent_count: 60,
      failed_count: 0,
    });
    for (const recipient of recipients) peerMessageTo(recipient);
    expect((peer.answered.ESME_RTHROTTLED ?? 0) - throttledBefore).toBe(25);
  });
});

describe('an SMPP bind that goes away mid-campaign', () => {
  it('recovers from a graceful SMSC unbind: every message sent once, none failed', async () => {
    const bindsBefore = peer.binds.filter((bind) => bind.accepted).length;
    const refusedBefore = peer.answered.ESME_RINVBNDSTS ?? 0;
    peer.unbindAfter(peer.parts.length + 80);
    const recipients = numbers(300);
    const id = await sendSmpp(recipients, 'SMSC restart');
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      sent_count: 300,
      failed_count: 0,
    });
    for (const row of await messageRows(stack, id))
      expect(row.providerMessageId).toBe(peerMessageTo(row.recipient).messageId);
    // Submissions the SMSC refused while unbinding went again on the next bind.
    expect((peer.answered.ESME_RINVBNDSTS ?? 0) - refusedBefore).toBeGreaterThanOrEqual(1);
    expect(peer.binds.filter((bind) => bind.accepted).length).toBeGreaterThan(bindsBefore);
  });

  it('after an abrupt drop: no duplicates, only PDUs in flight fail, the waiting ones go after the reconnect', async () => {
    const connectionBefore = peer.connections;
    peer.dropAfter(peer.parts.length + 100);
    const recipients = numbers(300);
    const id = await sendSmpp(recipients, 'Abrupt drop');
    const rows = await messageRows(stack, id);
    const sent = rows.filter((row) => row.status === 'sent');
    const failed = rows.filter((row) => row.status === 'failed');
    expect(sent.length + failed.length).toBe(300);
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      status: 'completed',
      sent_count: sent.length,
      failed_count: failed.length,
    });
    // No recipient reached the SMSC twice; the ones sent are exactly the ones it kept.
    const kept = recipients.filter((recipient) => peer.messagesTo(recipient).length > 0);
    for (const recipient of recipients)
      expect(peer.messagesTo(recipient).length).toBeLessThanOrEqual(1);
    expect(sent.map((row) => row.recipient).sort()).toEqual([...kept].sort());
    for (const row of sent)
      expect(row.providerMessageId).toBe(peerMessageTo(row.recipient).messageId);
    // Only PDUs written and unanswered at the drop: at most the window of 10.
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThanOrEqual(10);
    for (const row of failed) expect(row.error).toBe(OUTCOME_UNKNOWN);
    const afterDrop = kept.filter(
      (recipient) => peerMessageTo(recipient).connection > connectionBefore,
    );
    expect(afterDrop.length).toBeGreaterThan(0);
  });
});

describe('OTP through an SMPP provider', () => {
  it('sends a code that verifies, and records its receipt', async () => {
    const [recipient] = numbers(1) as [string];
    const send = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipient, purpose: 'login', provider_slug: 'smsc' },
    });
    expect(send.statusCode).toBe(202);
    const { data } = send.json();
    expect(data).toMatchObject({ status: 'accepted', provider: 'smsc', sender_id: null });
    const message = peerMessageTo(recipient);
    const code = /(\d{6})/.exec(message.text)?.[1] as string;
    expect(message.text).toBe(`Your verification code is ${code}.`);
    expect(message).toMatchObject({ from: 'Herald', dataCoding: 0, partIds: [message.messageId] });
    const verify = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipient, code, request_id: data.request_id },
    });
    expect(verify.statusCode).toBe(200);
    expect(verify.json()).toEqual({ message: 'The code is verified.' });
    const delivery = () => stack.sql<{ providerMessageId: string; deliveryStatus: string }[]>`
      select provider_message_id, delivery_status from otp_requests where id = ${data.request_id}`;
    await expect.poll(async () => (await delivery())[0]?.deliveryStatus).toBe('delivered');
    expect((await delivery())[0]?.providerMessageId).toBe(message.messageId);
  });
});

describe('failover and failures', () => {
  it('fails over from a Twilio rejection to SMPP: every message through SMPP, once', async () => {
    const accountSid = `AC${'7e'.repeat(16)}`;
    twilio = await startTwilioPeer({ accountSid, authToken: 'tw-token-for-smpp-1' });
    await providerCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'tw',
      type: 'twilio',
      'account-sid': accountSid,
      'auth-token': 'tw-token-for-smpp-1',
      from: '+15005550006',
      'base-url': twilio.url,
    });
    await routeCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'tw-smpp',
      providers: 'tw,smsc',
    });
    const recipients = numbers(20);
    for (const recipient of recipients)
      twilio.answer(recipient, {
        kind: 'error',
        status: 400,
        code: 21211,
        message: `The 'To' number ${recipient} is not a valid phone number.`,
      });
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients,
        message: 'Failover to SMPP',
        routing_type: 'failover',
        failover_route_slug: 'tw-smpp',
      },
      { total: 20 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
      sent_count: 20,
      failed_count: 0,
    });
    for (const row of await messageRows(stack, id)) {
      expect(row).toMatchObject({ status: 'sent', providerSlug: 'smsc' });
      expect(row.providerMessageId).toBe(peerMessageTo(row.recipient).messageId);
    }
    expect(twilio.refused.map((refusal) => refusal.to).sort()).toEqual([...recipients].sort());
    expect(twilio.refused.every((refusal) => refusal.code === 21211)).toBe(true);
    expect(twilio.messages).toEqual([]);
  });

  it('fails the messages with the SMSC reason, promptly, when the password is wrong', async () => {
    // An SMSC of its own: one account serves one provider, and this one's password is wrong.
    const guarded = await startSmscPeer(ACCOUNT);
    peers.push(guarded);
    await smppProvider(tenant, 'smsc-bad', guarded, { password: 'wrong-pw' });
    const recipients = numbers(3);
    const started = Date.now();
    const id = await sendSmpp(recipients, 'Never sent', { provider_slug: 'smsc-bad' });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await lookup(stack, tenant.token, id)).toMatchObject({
      sent_count: 0,
      failed_count: 3,
    });
    expect((await messageRows(stack, id)).map((row) => [row.status, row.error])).toEqual(
      recipients.map(() => [
        'failed',
        'smsc-bad: SMPP bind refused: ESME_RBINDFAIL (0x0000000D, bind failed)',
      ]),
    );
    expect(guarded.binds.filter((bind) => bind.password === 'wrong-pw').length).toBeGreaterThan(0);
    expect(guarded.binds.filter((bind) => bind.accepted)).toEqual([]);
    for (const recipient of recipients) expect(guarded.messagesTo(recipient)).toEqual([]);
  });

  it("keeps two workspaces' messages apart when their SMSCs answer with the same ids", async () => {
    const first = await startSmscPeer({ ...ACCOUNT, firstMessageId: 9000 });
    const second = await startSmscPeer({
      ...ACCOUNT,
      firstMessageId: 9000,
      autoReceipts: [{ stat: 'UNDELIV', err: '005' }],
    });
    peers.push(first, second);
    const owners = [await createTenant(stack.admin), await createTenant(stack.admin)] as const;
    await smppProvider(owners[0], 'smsc', first);
    await smppProvider(owners[1], 'smsc', second);
    const [one, two] = numbers(2) as [string, string];
    const ids = [
      await sendSmpp([one], 'Workspace one', {}, owners[0].token),
      await sendSmpp([two], 'Workspace two', {}, owners[1].token),
    ] as const;
    expect(peerMessageTo(one, first).messageId).toBe('9000');
    expect(peerMessageTo(two, second).messageId).toBe('9000');
    await expect.poll(() => receipted(ids[0])).toBe(1);
    await expect.poll(() => receipted(ids[1])).toBe(1);
    expect(await messageRows(stack, ids[0])).toMatchObject([
      { status: 'sent', providerMessageId: '9000', deliveryStatus: 'delivered' },
    ]);
    expect(await messageRows(stack, ids[1])).toMatchObject([
      {
        status: 'sent',
        providerMessageId: '9000',
        deliveryStatus: 'undelivered',
        deliveryErrorCode: 'UNDELIV:005',
      },
    ]);
  });
});

describe('replies over the bind', () => {
  it('STOP opts the recipient out, START opts them back in', async () => {
    const [recipient] = numbers(1) as [string];
    await sendSmpp([recipient], 'Reply STOP to opt out');
    const optOuts = () => stack.sql<{ recipient: string; source: string }[]>`
      select recipient, source from opt_outs where workspace_id = ${tenant.workspaceId}
        and recipient = ${recipient}`;
    expect(await peer.sendReply({ from: recipient, to: 'Herald', text: 'STOP' })).toBe(0);
    expect(await optOuts()).toEqual([{ recipient, source: 'reply' }]);
    expect(await peer.sendReply({ from: recipient, to: 'Herald', text: 'start' })).toBe(0);
    expect(await optOuts()).toEqual([]);
    // A reply in UCS-2 reads the same.
    expect(
      await peer.sendReply({ from: recipient, to: 'Herald', text: 'Stop', dataCoding: 8 }),
    ).toBe(0);
    expect(await optOuts()).toEqual([{ recipient, source: 'reply' }]);
  });
});

describe("a worker's SMPP sessions", () => {
  it('bind each active provider, rebind when its settings change, and let a disabled one go', async () => {
    const owner = await createTenant(stack.admin);
    const target = await startSmscPeer(ACCOUNT);
    peers.push(target);
    await smppProvider(owner, 'smsc', target);
    // Sessions of this test's own, for this workspace only, refreshed by hand (the shared
    // worker's refresh every 30 s may bind the provider too: the counts allow for it).
    const sessions = createSmppSessions({
      sql: stack.sql,
      secret: inject('secret'),
      providers: async () =>
        (await findActiveSmppProviders(stack.sql)).filter(
          (record) => record.workspaceId === owner.workspaceId,
        ),
    });
    try {
      await sessions.refresh();
      expect(sessions.size).toBe(1);
      await expect.poll(() => target.bound).toBeGreaterThanOrEqual(1);
      const binds = () => target.binds.filter((bind) => bind.accepted).length;
      const bindsBefore = binds();
      const unbindsBefore = target.unbinds;

      // A new window is a new bind: the old one is unbound, a new one made.
      await stack.sql`
        update providers set settings = settings || '{"window": "4"}'
        where workspace_id = ${owner.workspaceId} and slug = 'smsc'`;
      await sessions.refresh();
      await expect.poll(() => target.unbinds).toBeGreaterThanOrEqual(unbindsBefore + 1);
      await expect.poll(binds).toBeGreaterThanOrEqual(bindsBefore + 1);

      const unbindsWhileActive = target.unbinds;
      await providerDisable(stack.admin, { workspace: owner.slug, slug: 'smsc' });
      await sessions.refresh();
      expect(sessions.size).toBe(0);
      await expect.poll(() => target.unbinds).toBeGreaterThanOrEqual(unbindsWhileActive + 1);
    } finally {
      await sessions.close();
    }
  });
});

describe('SMPP provider configuration', () => {
  it('stores the system id and password only as ciphertext', async () => {
    const [row] = await stack.sql<Record<string, unknown>[]>`
      select * from providers where workspace_id = ${tenant.workspaceId} and slug = 'smsc'`;
    const credentials = row?.credentials as Uint8Array;
    expect(row).toMatchObject({
      type: 'smpp',
      messagesPerSecond: 2000,
      settings: { host: '127.0.0.1', port: String(peer.port), source_addr: 'Herald' },
    });
    const text = JSON.stringify(row) + Buffer.from(credentials).toString('latin1');
    expect(text).not.toContain(ACCOUNT.password);
    expect(text).not.toContain(ACCOUNT.systemId);
    expect(
      decryptCredentials(
        inject('secret'),
        providerCredentialsContext(tenant.workspaceId, 'smsc'),
        credentials,
      ),
    ).toEqual({ system_id: ACCOUNT.systemId, password: ACCOUNT.password });
  });

  it('refuses incomplete or out-of-range options with a clear usage error', async () => {
    const base = {
      workspace: tenant.slug,
      slug: 'smsc-x',
      type: 'smpp',
      host: '127.0.0.1',
      port: '2775',
      'system-id': 'herald',
      password: 'secret1',
    };
    const cases: [Record<string, string | undefined>, string][] = [
      [{ host: undefined }, '--host is required'],
      [
        { host: 'smsc.example.com:2775' },
        '--host "smsc.example.com:2775" must be a host name or an IP address',
      ],
      [{ port: undefined }, '--port is required'],
      [{ port: '70000' }, '--port must be a whole number from 1 to 65535'],
      [{ 'system-id': undefined }, '--system-id is required'],
      [
        { 'system-id': 'a-system-id-too-long' },
        '--system-id must be 1 to 15 printable ASCII characters without spaces (SMPP 3.4)',
      ],
      [{ password: undefined }, '--password is required'],
      [
        { password: 'longer-than-8' },
        '--password must be 1 to 8 printable ASCII characters without spaces (SMPP 3.4)',
      ],
      [{ window: '0' }, '--window must be a whole number from 1 to 100'],
      [
        { 'source-addr': 'Far too long a name' },
        '--source-addr "Far too long a name" must be an E.164 number, a short code or an alphanumeric sender id (up to 11 characters)',
      ],
      [{ from: '+15005550006' }, '--from applies only to --type twilio'],
    ];
    for (const [change, message] of cases)
      await expect(providerCreate(stack.admin, { ...base, ...change })).rejects.toThrow(
        new UsageError(message),
      );
    await expect(
      providerCreate(stack.admin, { ...base, type: 'simulator', 'base-url': 'http://x.test' }),
    ).rejects.toThrow(new UsageError('--host applies only to --type smpp'));
  });

  it('`herald provider create --type smpp` never prints the password', async () => {
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
    const args = (port: string) => [
      'provider',
      'create',
      '--workspace',
      tenant.slug,
      '--type',
      'smpp',
      '--host',
      'smsc.example.net',
      '--port',
      port,
      '--system-id',
      'acct42',
      '--password',
      'Zq8#w1Lm',
      '--window',
      '20',
    ];
    const createdByCli = await runHeraldJson([...args('2775'), '--slug', 'smsc-cli'], env);
    expect(createdByCli.code, createdByCli.stderr).toBe(0);
    expect(createdByCli.json).toEqual({ id: expect.any(Number), slug: 'smsc-cli' });
    const refused = await runHeraldJson([...args('0'), '--slug', 'smsc-cli2'], env);
    expect(refused.code).toBe(2);
    expect(refused.json).toEqual({
      error: { type: 'UsageError', message: '--port must be a whole number from 1 to 65535' },
    });
    for (const result of [createdByCli, refused])
      expect(result.stdout + result.stderr).not.toContain('Zq8#w1Lm');
    // Not reachable: let the worker drop it rather than retry it for the rest of the run.
    await providerDisable(stack.admin, { workspace: tenant.slug, slug: 'smsc-cli' });
  });

  it('answers a receipt webhook for an SMPP provider with 400: receipts come over the bind', async () => {
    const [recipient] = numbers(1) as [string];
    const id = await sendSmpp([recipient], 'Webhook');
    const response = await stack.app.inject({
      method: 'POST',
      url: '/webhooks/providers/smsc',
      payload: { reference: `cmp-${id}-1`, id: peerMessageTo(recipient).messageId },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      message: 'SMPP receipts arrive over the bind, not by webhook',
    });
  });
});
