/**
 * The SMPP client (providers/smpp/client.ts) against the local SMSC peer (test/support/smsc-peer.ts),
 * with short timers: the window, keep-alive, throttling, refused binds, drops and SMSC unbinds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  SmppClient,
  type SmppClientOptions,
  smppAbsoluteTime,
} from '../../providers/smpp/client.js';
import { ESME, startSmscPeer } from '../support/smsc-peer.js';

const ACCOUNT = { systemId: 'herald', password: 'pw-7x2k' };
const open: { close(): Promise<void> }[] = [];

async function peerAndClient(options: Partial<SmppClientOptions> = {}) {
  const peer = await startSmscPeer({ ...ACCOUNT, autoReceipts: null });
  const client = new SmppClient({
    host: peer.host,
    port: peer.port,
    ...ACCOUNT,
    reconnectDelaysMs: [50],
    throttleDelaysMs: [20, 40],
    responseTimeoutMs: 500,
    ...options,
  });
  open.push(client, peer);
  return { peer, client };
}

const message = (to: string, body = 'Hello') => ({ to, from: 'Herald', body });

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

describe('SmppClient', () => {
  it('binds as a transceiver with its credentials and SMPP 3.4, and submits', async () => {
    const { peer, client } = await peerAndClient({ systemType: 'VMA' });
    const result = await client.submitMessage(message('+61412345678', 'Hi there'), null);
    expect(result).toEqual({
      outcome: { kind: 'accepted', providerMessageId: '1' },
      partIds: ['1'],
    });
    expect(peer.binds).toEqual([
      {
        command: 'bind_transceiver',
        systemId: 'herald',
        password: 'pw-7x2k',
        systemType: 'VMA',
        interfaceVersion: 0x34,
        accepted: true,
        connection: 1,
      },
    ]);
    expect(peer.parts).toMatchObject([
      {
        to: '61412345678',
        destTon: 1,
        destNpi: 1,
        from: 'Herald',
        sourceTon: 5,
        sourceNpi: 0,
        dataCoding: 0,
        esmClass: 0,
        registeredDelivery: 1,
        udh: null,
        text: 'Hi there',
      },
    ]);
    expect(peer.problems).toEqual([]);
  });

  it('keeps at most `window` submit_sm outstanding; the rest wait and all go', async () => {
    const { peer, client } = await peerAndClient({ window: 3 });
    peer.responseDelayMs = 30;
    const recipients = Array.from({ length: 20 }, (_, index) => `+614000000${10 + index}`);
    const results = await Promise.all(
      recipients.map((to) => client.submitMessage(message(to), null)),
    );
    expect(results.every((result) => result.outcome.kind === 'accepted')).toBe(true);
    expect(peer.maxOutstanding).toBe(3);
    expect(peer.messages.map((each) => each.to).sort()).toEqual([...recipients].sort());
  });

  it('runs beforeWrite in a window slot, once per message, right before its first part is written', async () => {
    const { peer, client } = await peerAndClient({ window: 1 });
    peer.responseDelayMs = 100;
    const events: string[] = [];
    const hook = (name: string) => async () => {
      // Nothing of this message has been written yet, and no other PDU holds the slot.
      events.push(`${name} hook after ${peer.parts.length} parts, ${peer.maxOutstanding} at most`);
    };
    const long = 'Long '.repeat(50);
    const [first, second] = await Promise.all([
      client.submitMessage(message('+61400000101'), null, hook('first')),
      client.submitMessage(message('+61400000102', long), null, hook('second')),
    ]);
    expect(first.outcome.kind).toBe('accepted');
    expect(second.outcome.kind).toBe('accepted');
    expect(second.partIds).toHaveLength(2);
    expect(events).toEqual([
      'first hook after 0 parts, 0 at most',
      'second hook after 1 parts, 1 at most',
    ]);
    expect(peer.maxOutstanding).toBe(1);
    expect(peer.problems).toEqual([]);
  });

  it('writes a message at once when its beforeWrite calls the write it is given, and only once', async () => {
    const { peer, client } = await peerAndClient();
    const result = await client.submitMessage(message('+61400000111'), null, async (write) => {
      write?.();
      write?.();
      // Written before beforeWrite resolves: the SMSC reads it while this still waits.
      await expect.poll(() => peer.parts.length).toBe(1);
    });
    expect(result.outcome).toEqual({ kind: 'accepted', providerMessageId: '1' });
    expect(peer.parts.map((part) => part.to)).toEqual(['61400000111']);
    expect(peer.problems).toEqual([]);
  });

  it('runs afterAccepted with the message id before the slot goes to the next message', async () => {
    const { peer, client } = await peerAndClient({ window: 1 });
    const events: string[] = [];
    const [first, second] = await Promise.all([
      client.submitMessage(message('+61400000301'), null, undefined, async (id) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        events.push(`first accepted as ${id}, ${peer.parts.length} parts at the SMSC`);
      }),
      client.submitMessage(message('+61400000302'), null, async () => {
        events.push('second about to be written');
      }),
    ]);
    expect(first).toEqual({
      outcome: { kind: 'accepted', providerMessageId: '1' },
      partIds: ['1'],
    });
    expect(second.outcome).toEqual({ kind: 'accepted', providerMessageId: '2' });
    expect(events).toEqual([
      'first accepted as 1, 1 parts at the SMSC',
      'second about to be written',
    ]);
  });

  it('writes nothing of a message whose beforeWrite throws, frees its slot, and rejects with its error', async () => {
    const { peer, client } = await peerAndClient({ window: 1 });
    const refused = new Error('submission lease lost: a newer attempt is waiting for it');
    const results = await Promise.allSettled([
      client.submitMessage(message('+61400000201'), null, async () => {
        throw refused;
      }),
      client.submitMessage(message('+61400000202'), null, async () => {}),
    ]);
    expect(results[0]).toEqual({ status: 'rejected', reason: refused });
    expect(results[1]).toMatchObject({
      status: 'fulfilled',
      value: { outcome: { kind: 'accepted' } },
    });
    expect(peer.parts.map((part) => part.to)).toEqual(['61400000202']);
  });

  it('backs off on ESME_RTHROTTLED and resubmits on the same bind', async () => {
    const { peer, client } = await peerAndClient();
    peer.throttle(2);
    const result = await client.submitMessage(message('+61412345001'), null);
    expect(result.outcome).toEqual({ kind: 'accepted', providerMessageId: '1' });
    expect(peer.answered).toEqual({ ESME_RTHROTTLED: 2, ESME_ROK: 1 });
    expect(peer.connections).toBe(1);
  });

  it('fails, retryably, once the throttling back-off budget is spent, asking for the last back-off', async () => {
    const { peer, client } = await peerAndClient();
    peer.throttle(10, ESME.RMSGQFUL);
    const result = await client.submitMessage(message('+61412345002'), null);
    expect(result.outcome).toEqual({
      kind: 'failed',
      reason: 'ESME_RMSGQFUL (0x00000014, message queue full), still after 2 back-offs',
      retryAfterMs: 40,
    });
    expect(peer.answered).toEqual({ ESME_RMSGQFUL: 3 });
    expect(peer.messages).toEqual([]);
  });

  it('a throttled submission that outwaits the queue fails with the back-off as retryAfterMs', async () => {
    const { peer, client } = await peerAndClient({
      throttleDelaysMs: [5_000],
      maxQueueWaitMs: 300,
    });
    peer.throttle(1);
    const result = await client.submitMessage(message('+61412345005'), null);
    expect(result.outcome).toEqual({
      kind: 'failed',
      reason: expect.stringMatching(
        /^waited \d+ s for the SMSC to take it \(ESME_RTHROTTLED \(0x00000058, /,
      ),
      retryAfterMs: 5_000,
    });
    expect(peer.answered).toEqual({ ESME_RTHROTTLED: 1 });
    expect(peer.messages).toEqual([]);
  });

  it('maps a permanent command_status to rejected and a transient one to failed', async () => {
    const { peer, client } = await peerAndClient();
    peer.refuse('+61412345003', ESME.RINVDSTADR);
    peer.refuse('+61412345004', ESME.RSYSERR);
    expect((await client.submitMessage(message('+61412345003'), null)).outcome).toEqual({
      kind: 'rejected',
      reason: 'ESME_RINVDSTADR (0x0000000B, invalid destination address)',
    });
    expect((await client.submitMessage(message('+61412345004'), null)).outcome).toEqual({
      kind: 'failed',
      reason: 'ESME_RSYSERR (0x00000008, system error)',
    });
  });

  it('fails submissions at once when the SMSC refuses the bind', async () => {
    const peer = await startSmscPeer({ ...ACCOUNT, autoReceipts: null });
    const client = new SmppClient({
      host: peer.host,
      port: peer.port,
      systemId: 'herald',
      password: 'wrong',
      reconnectDelaysMs: [60_000],
    });
    open.push(client, peer);
    const started = Date.now();
    const refused = 'SMPP bind refused: ESME_RBINDFAIL (0x0000000D, bind failed)';
    expect((await client.submitMessage(message('+61412345005'), null)).outcome).toEqual({
      kind: 'failed',
      reason: refused,
    });
    // While the next attempt is pending, new submissions do not wait for it.
    expect((await client.submitMessage(message('+61412345006'), null)).outcome).toEqual({
      kind: 'failed',
      reason: refused,
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(peer.binds.map((bind) => bind.accepted)).toEqual([false]);
  });

  it('treats a missing enquire_link_resp as a dead bind and binds again', async () => {
    const { peer, client } = await peerAndClient({ enquireLinkMs: 100, responseTimeoutMs: 100 });
    client.start();
    await expect.poll(() => client.binds).toBe(1);
    peer.ignoreEnquireLinks = true;
    await expect.poll(() => peer.connections, { timeout: 3_000 }).toBeGreaterThanOrEqual(2);
    peer.ignoreEnquireLinks = false;
    await expect.poll(() => client.bound).toBe(true);
    expect((await client.submitMessage(message('+61412345007'), null)).outcome.kind).toBe(
      'accepted',
    );
  });

  it('on a drop: what was written is unknown, what waited for the window goes on the next bind', async () => {
    const { peer, client } = await peerAndClient({ window: 2 });
    peer.responseDelayMs = 20;
    peer.dropAfter(3);
    const recipients = Array.from({ length: 10 }, (_, index) => `+614000001${10 + index}`);
    const results = await Promise.all(
      recipients.map((to) => client.submitMessage(message(to), null)),
    );
    const unknown = results.filter((result) => result.outcome.kind === 'unknown');
    const accepted = results.filter((result) => result.outcome.kind === 'accepted');
    expect(unknown.map((result) => result.outcome)).toEqual(
      unknown.map(() => ({
        kind: 'unknown',
        reason: 'the SMPP connection closed before the SMSC answered',
      })),
    );
    expect(unknown.length).toBeGreaterThanOrEqual(1);
    expect(unknown.length).toBeLessThanOrEqual(2);
    expect(accepted.length + unknown.length).toBe(10);
    expect(peer.messages).toHaveLength(accepted.length);
    // Those that were waiting for a window slot went on the second connection.
    const first = peer.messages.filter((each) => each.connection === 1).length;
    expect(first).toBeGreaterThanOrEqual(3);
    expect(peer.messages.filter((each) => each.connection === 2)).toHaveLength(
      accepted.length - first,
    );
    expect(accepted.length - first).toBeGreaterThan(0);
    expect(new Set(peer.messages.map((each) => each.to)).size).toBe(peer.messages.length);
  });

  it('on an SMSC unbind: answers it, collects what is owed, rebinds and resubmits ESME_RINVBNDSTS', async () => {
    const { peer, client } = await peerAndClient({ window: 4 });
    peer.unbindAfter(5);
    const recipients = Array.from({ length: 30 }, (_, index) => `+614000002${10 + index}`);
    const results = await Promise.all(
      recipients.map((to) => client.submitMessage(message(to), null)),
    );
    expect(results.map((result) => result.outcome.kind)).toEqual(recipients.map(() => 'accepted'));
    expect(peer.answered.ESME_RINVBNDSTS).toBeGreaterThanOrEqual(1);
    expect(peer.messages.map((each) => each.to).sort()).toEqual([...recipients].sort());
    expect(peer.connections).toBe(2);
  });

  it('unbinds on close', async () => {
    const { peer, client } = await peerAndClient();
    await client.submitMessage(message('+61412345008'), null);
    await client.close();
    expect(peer.connections).toBe(1);
    expect((await client.submitMessage(message('+61412345009'), null)).outcome).toEqual({
      kind: 'failed',
      reason: 'the SMPP client is closed',
    });
  });
});

describe('smppAbsoluteTime', () => {
  it('writes SMPP 3.4 absolute time in UTC (YYMMDDhhmmsstnnp)', () => {
    expect(smppAbsoluteTime(new Date('2026-11-24T03:07:09.456Z'))).toBe('261124030709000+');
    expect(smppAbsoluteTime(new Date('2031-01-02T23:59:05Z'))).toBe('310102235905000+');
  });
});
