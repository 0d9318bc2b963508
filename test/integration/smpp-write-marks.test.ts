/**
 * Write marks (db/submission-writes.ts): a campaign message claimed for an SMPP provider counts as
 * possibly sent only once its batch's write mark committed, and the batch's PDUs are written right
 * after that COMMIT, in the same synchronous block. An attempt taking over sends a claimed message whose
 * mark never committed, and fails as outcome unknown what may have left. Against the local SMSC
 * peer (test/support/smsc-peer.ts), through the chunk activity itself.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCampaignActivities, createChunkRunner } from '../../activities/campaign.js';
import { createFirstTries } from '../../activities/first-try.js';
import { createOtpSubmitter } from '../../activities/otp.js';
import { createSmppSessions } from '../../activities/smpp-binds.js';
import { providerCreate } from '../../cli/admin/providers.js';
import { openWriteMark } from '../../db/submission-writes.js';
import type { SmppSessions } from '../../providers/smpp/sessions.js';
import { unwrittenClaims } from '../../telemetry/metrics.js';
import { messageRows, numbers, saveDirectCampaign } from '../support/send.js';
import { type SmscPeer, smppProviderOptions, startSmscPeer } from '../support/smsc-peer.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const ACCOUNT = { systemId: 'herald-m', password: 'M4rk-ed' };
const SLUG = 'marked';
/** submit_sm's command_id. */
const SUBMIT_SM = 0x00000004;

let stack: Stack;
let tenant: Tenant;
let peer: SmscPeer;
let sessions: SmppSessions;
let activities: ReturnType<typeof createCampaignActivities>;
let firstTries: ReturnType<typeof createFirstTries>;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  peer = await startSmscPeer(ACCOUNT);
  await providerCreate(stack.admin, {
    workspace: tenant.slug,
    slug: SLUG,
    ...smppProviderOptions(peer, ACCOUNT),
    'source-addr': 'Herald',
    window: '10',
    'messages-per-second': '2000',
  });
  sessions = createSmppSessions({ sql: stack.sql, secret: stack.admin.secret });
  const deps = {
    sql: stack.sql,
    ownProviderUrl: 'http://127.0.0.1:9',
    publicUrl: 'http://herald.test',
    secret: stack.admin.secret,
    smppSessions: sessions,
  };
  const runChunk = createChunkRunner(deps);
  activities = createCampaignActivities(deps, runChunk);
  firstTries = createFirstTries(deps, runChunk, createOtpSubmitter(deps), {
    slots: 4,
    log: () => {},
  });
});

afterAll(async () => {
  await sessions?.close();
  await peer?.close();
  await stack?.close();
});

function campaignOf(recipients: string[], alongside?: Parameters<typeof saveDirectCampaign>[3]) {
  return saveDirectCampaign(
    stack,
    tenant.workspaceId,
    { body: 'Marked before written', providerSlug: SLUG, recipients, validityHours: 1 },
    alongside,
  );
}

/** Mark transactions left open: a mark is open only between its claim and its batch's write. */
async function openMarks(): Promise<number> {
  const [row] = await stack.sql<{ count: number }[]>`
    select count(*)::int as count from pg_stat_activity
    where state = 'idle in transaction' and query like 'insert into submission_writes%'`;
  return row?.count ?? 0;
}

function runChunk(campaignId: number, count: number, attempt = 1) {
  return new MockActivityEnvironment({ attempt, heartbeatTimeoutMs: 10_000 }).run(
    activities.submitChunk,
    { campaignId, fromSeq: 1, toSeq: count },
  );
}

async function unwrittenCount(): Promise<number> {
  return (await unwrittenClaims.get()).values[0]?.value ?? 0;
}

describe('an SMPP batch is taken as possibly sent only once its write mark committed', () => {
  it('sends what an interrupted attempt claimed but never wrote, and fails as unknown what may have left', async () => {
    const recipients = numbers(4);
    const campaignId = await campaignOf(recipients);
    const [unwritten, written, beforeRestart] = [randomUUID(), randomUUID(), randomUUID()];
    await stack.sql`insert into submission_writes (batch) values (${written})`;
    // As a killed worker leaves them: 1 claimed, its mark never committed; 2 claimed, its mark
    // committed; 3 claimed with no mark, but before Postgres last started (a COMMIT the restart
    // may have lost); 4 never claimed.
    await stack.sql`
      update campaign_messages m set attempt_provider = ${SLUG}, attempt_started_at = now(),
        attempt_batch = v.batch::uuid,
        attempt_epoch = pg_postmaster_start_time() - v.before::interval
      from (values (1, ${unwritten}, '0 s'), (2, ${written}, '0 s'), (3, ${beforeRestart}, '1 h'))
        as v(seq, batch, before)
      where m.campaign_id = ${campaignId} and m.seq = v.seq`;
    const resentBefore = await unwrittenCount();

    await runChunk(campaignId, 4, 2);

    const rows = await messageRows(stack, campaignId);
    expect(rows.map((row) => row.status)).toEqual(['sent', 'failed', 'failed', 'sent']);
    for (const row of [rows[1], rows[2]])
      expect(row?.error).toBe(
        `outcome unknown: an attempt was interrupted, and ${SLUG} cannot look messages up`,
      );
    expect(recipients.map((to) => peer.messagesTo(to).length)).toEqual([1, 0, 0, 1]);
    expect((await unwrittenCount()) - resentBefore).toBe(1);
  });

  it("writes each batch's PDUs right after its COMMIT, in the same synchronous block and system call", async () => {
    const recipients = numbers(6);
    const campaignId = await campaignOf(recipients);
    const writes: { socket: net.Socket; bytes: Buffer; inCommitsBlock: boolean }[] = [];
    // True from a COMMIT's write until the next microtask: what is written meanwhile is written
    // in the same synchronous block.
    let inCommitsBlock = false;
    // What each socket handed the kernel at once: a corked socket's writes leave in one writev.
    const flushes: { socket: net.Socket; chunks: Buffer[] }[] = [];
    type Flush = (this: net.Socket, ...args: unknown[]) => void;
    const socketWrite = net.Socket.prototype as unknown as { _write: Flush; _writev: Flush };
    const [single, vector] = [socketWrite._write, socketWrite._writev];
    socketWrite._write = function (chunk, ...rest) {
      flushes.push({ socket: this, chunks: [Buffer.from(chunk as Uint8Array)] });
      return single.call(this, chunk, ...rest);
    };
    socketWrite._writev = function (chunks, ...rest) {
      const buffers = (chunks as { chunk: Uint8Array }[]).map(({ chunk }) => Buffer.from(chunk));
      flushes.push({ socket: this, chunks: buffers });
      return vector.call(this, chunks, ...rest);
    };
    const write = net.Socket.prototype.write;
    net.Socket.prototype.write = function (this: net.Socket, chunk: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'string') {
        const bytes = Buffer.from(chunk as Uint8Array);
        writes.push({ socket: this, bytes, inCommitsBlock });
        if (bytes.includes('commit')) {
          inCommitsBlock = true;
          queueMicrotask(() => {
            inCommitsBlock = false;
          });
        }
      }
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof write;
    try {
      await runChunk(campaignId, 6);
    } finally {
      net.Socket.prototype.write = write;
      [socketWrite._write, socketWrite._writev] = [single, vector];
    }

    // Each PDU, and the COMMIT of its batch's mark: the next write on the session whose bind
    // carried the batch's id.
    const batches = await stack.sql<{ recipient: string; batch: string }[]>`
      select recipient, attempt_batch::text as batch from campaign_messages
      where campaign_id = ${campaignId} order by seq`;
    const indexOf = (found: (write: (typeof writes)[number], at: number) => boolean) =>
      writes.findIndex(found);
    const pdus = batches.map(({ recipient, batch }) => {
      const pdu = indexOf(
        ({ socket, bytes }) =>
          socket.remotePort === peer.port &&
          bytes.readUInt32BE(4) === SUBMIT_SM &&
          bytes.includes(recipient.slice(1)),
      );
      // The batch's id goes out twice: in the claim's UPDATE, and in the mark's insert, whose
      // session sends the COMMIT next.
      const ends = writes.flatMap(({ bytes, socket }, at) => {
        if (!bytes.includes(batch)) return [];
        const next = indexOf((later, after) => after > at && later.socket === socket);
        return writes[next]?.bytes.includes('commit') ? [next] : [];
      });
      expect(ends).toHaveLength(1);
      return { pdu, commit: ends[0] as number };
    });
    // A batch's PDUs follow its COMMIT with nothing else written in between, in its block.
    const commits = [...new Set(pdus.map(({ commit }) => commit))];
    for (const commit of commits) {
      const batch = pdus.filter((pdu) => pdu.commit === commit).map(({ pdu }) => pdu);
      expect(batch.sort((a, b) => a - b)).toEqual(batch.map((_, at) => commit + 1 + at));
      for (const at of batch) expect(writes[at]?.inCommitsBlock).toBe(true);
      const flushed = batch.map((at) =>
        flushes.findIndex(({ chunks }) => chunks.some((chunk) => writes[at]?.bytes.equals(chunk))),
      );
      expect(new Set(flushed).size).toBe(1);
      expect(flushed[0]).toBeGreaterThanOrEqual(0);
    }

    const rows = await messageRows(stack, campaignId);
    expect(rows.map((row) => row.status)).toEqual(recipients.map(() => 'sent'));
    expect(recipients.map((to) => peer.messagesTo(to).length)).toEqual(recipients.map(() => 1));
  });

  it("gives a first try's claim the mark opened while its campaign's save committed", async () => {
    const recipients = numbers(3);
    const reserved = firstTries.reserve({ messages: 3, scheduledAt: null });
    expect(reserved).toBeDefined();
    const campaignId = await campaignOf(recipients, async (tx, { id }) => reserved?.hold(tx, id));
    await reserved?.begin(3);
    await firstTries.drain();

    const rows = await messageRows(stack, campaignId);
    expect(rows.map((row) => row.status)).toEqual(['sent', 'sent', 'sent']);
    expect(recipients.map((to) => peer.messagesTo(to).length)).toEqual([1, 1, 1]);
    // Every claim's batch has its committed row: the one opened ahead among them.
    const [marks] = await stack.sql<{ claims: number; marked: number }[]>`
      select count(*)::int as claims, count(w.batch)::int as marked
      from campaign_messages m left join submission_writes w on w.batch = m.attempt_batch
      where m.campaign_id = ${campaignId}`;
    expect(marks).toEqual({ claims: 3, marked: 3 });
    await expect.poll(openMarks, { timeout: 3_000 }).toBe(0);
  });

  it('writes nothing when its connection ended before the COMMIT, and the pool goes on', async () => {
    const batch = randomUUID();
    const lost: unknown[] = [];
    const mark = await openWriteMark(stack.sql, batch, (error) => lost.push(error));
    // As Postgres's idle-in-transaction timeout ends a mark left waiting.
    const [idle] = await stack.sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where state = 'idle in transaction' and query like 'insert into submission_writes%'`;
    await stack.sql`select pg_terminate_backend(${idle?.pid ?? 0}, 5000)`;
    // The backend has exited; its connection's close reaches this process a moment later.
    await sleep(100);

    let writes = 0;
    await expect(
      mark.commit(() => {
        writes++;
      }),
    ).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(writes).toBe(0);
    expect(lost).toEqual([]);
    expect(await stack.sql`select 1 from submission_writes where batch = ${batch}`).toHaveLength(0);
    // The closed session was not given back to the pool as open: every connection still answers.
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => stack.sql<{ one: number }[]>`select 1 as one`),
    );
    expect(answers.map(([row]) => row?.one)).toEqual(answers.map(() => 1));
  });

  it('rolls back the mark opened ahead when the save does not commit', async () => {
    const reserved = firstTries.reserve({ messages: 2, scheduledAt: null });
    const refused = new Error('the save is refused after the try was held');
    await expect(
      campaignOf(numbers(2), async (tx, { id }) => {
        await reserved?.hold(tx, id);
        throw refused;
      }),
    ).rejects.toBe(refused);
    reserved?.cancel();
    // Before Postgres's own idle-in-transaction timeout (5 s) would end it.
    await expect.poll(openMarks, { timeout: 3_000 }).toBe(0);
  });
});
