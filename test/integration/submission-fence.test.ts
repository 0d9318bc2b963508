import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCampaignActivities } from '../../activities/campaign.js';
import { insertProvider } from '../../db/providers.js';
import {
  claimFreeLease,
  claimLease,
  deleteStaleLeases,
  newLeaseToken,
  releaseLease,
  renewLease,
} from '../../db/submission-leases.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import {
  inbox,
  messageRows,
  numbers,
  saveDirectCampaign,
  simulatorProvider,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
let simulator: RunningSimulator;
let activities: ReturnType<typeof createCampaignActivities>;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  // Paced, so one chunk takes seconds and a second attempt can start beside the first.
  simulator = await simulatorProvider(stack, tenant.workspaceId, 'paced', {
    messagesPerSecond: 10,
  });
  activities = createCampaignActivities({
    sql: stack.sql,
    ownProviderUrl: simulator.url,
    publicUrl: 'http://herald.test',
    secret: stack.admin.secret,
  });
});

afterAll(async () => {
  await simulator?.close();
  await stack?.close();
});

function campaignOf(recipients: string[], providerSlug = 'paced') {
  return saveDirectCampaign(stack, tenant.workspaceId, {
    body: 'Fenced',
    providerSlug,
    recipients,
    validityHours: 1,
  });
}

/** Temporal's view of a chunk attempt: its number, and the progress its predecessor beat. */
function attempt(n: number) {
  return new MockActivityEnvironment({ attempt: n, heartbeatTimeoutMs: 10_000 });
}

async function timesReceived(recipients: string[]) {
  return Promise.all(recipients.map(async (to) => (await inbox(simulator.url, to)).length));
}

describe('fenced chunk submissions', () => {
  it('sends each message once when a retry starts beside an attempt that is still alive', async () => {
    const recipients = numbers(80);
    const campaignId = await campaignOf(recipients);
    const chunk = { campaignId, fromSeq: 1, toSeq: 80 };
    // As during a Temporal outage: attempt 1 timed out on the server but runs on in the worker.
    const first = attempt(1).run(activities.submitChunk, chunk);
    const firstSettled = first.then(
      () => 'completed',
      (error: unknown) => error,
    );
    await sleep(1_000);
    const second = attempt(2).run(activities.submitChunk, chunk);

    // The holder learns at its next renewal that a newer attempt waits, and stops.
    const stopped = await firstSettled;
    expect(stopped).toBeInstanceOf(ApplicationFailure);
    expect((stopped as ApplicationFailure).type).toBe('SubmissionLeaseLost');
    await second;

    expect(await timesReceived(recipients)).toEqual(recipients.map(() => 1));
    const rows = await messageRows(stack, campaignId);
    expect(rows.map((row) => row.status)).toEqual(recipients.map(() => 'sent'));
    expect(new Set(rows.map((row) => row.providerMessageId)).size).toBe(80);
  });

  it('stops submitting at once when its attempt is cancelled, and its successor finishes', async () => {
    const recipients = numbers(30);
    const campaignId = await campaignOf(recipients);
    const chunk = { campaignId, fromSeq: 1, toSeq: 30 };
    const environment = attempt(1);
    const first = environment.run(activities.submitChunk, chunk).catch((error: unknown) => error);
    await sleep(1_000);
    environment.cancel('TIMED_OUT');
    await first;
    // Whatever was in flight has ended; nothing more leaves for this chunk from attempt 1.
    const afterCancel = (await timesReceived(recipients)).reduce((sum, n) => sum + n, 0);
    await sleep(1_000);
    expect((await timesReceived(recipients)).reduce((sum, n) => sum + n, 0)).toBe(afterCancel);
    expect(afterCancel).toBeLessThan(30);

    await attempt(2).run(activities.submitChunk, chunk);
    expect(await timesReceived(recipients)).toEqual(recipients.map(() => 1));
  });
});

/**
 * In front of the simulator: passes a submission on, then drops the connection before its answer
 * (an unknown outcome), and answers every lookup 503 until `lookups` is set to work.
 */
function flakyFront(target: string) {
  const state = { lookups: false };
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method === 'POST') {
      await fetch(new URL(request.url ?? '/', target), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      request.socket.destroy();
      return;
    }
    if (!state.lookups) {
      response.writeHead(503).end();
      return;
    }
    const answer = await fetch(new URL(request.url ?? '/', target));
    response.writeHead(answer.status, { 'content-type': 'application/json' });
    response.end(await answer.text());
  });
  return { server, state };
}

describe('uncertain submissions whose lookup cannot answer', () => {
  it('stay queued until a later attempt can look them up, and are never resent', async () => {
    const front = flakyFront(simulator.url);
    await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
    const { port } = front.server.address() as { port: number };
    try {
      await insertProvider(stack.sql, {
        workspaceId: tenant.workspaceId,
        slug: 'flaky',
        name: 'flaky',
        type: 'simulator',
        requiresSenderId: false,
        settings: { base_url: `http://127.0.0.1:${port}` },
      });
      const recipients = numbers(3);
      const campaignId = await campaignOf(recipients, 'flaky');
      const chunk = { campaignId, fromSeq: 1, toSeq: 3 };
      const first = await attempt(1)
        .run(activities.submitChunk, chunk)
        .catch((error: unknown) => error);
      expect(first).toBeInstanceOf(ApplicationFailure);
      expect((first as ApplicationFailure).type).toBe('LookupUnanswered');
      expect((await messageRows(stack, campaignId)).map((row) => row.status)).toEqual([
        'queued',
        'queued',
        'queued',
      ]);

      front.state.lookups = true;
      await attempt(2).run(activities.submitChunk, chunk);
      expect((await messageRows(stack, campaignId)).map((row) => row.status)).toEqual([
        'sent',
        'sent',
        'sent',
      ]);
      expect(await timesReceived(recipients)).toEqual([1, 1, 1]);
    } finally {
      front.server.closeAllConnections();
      await new Promise((resolve) => front.server.close(resolve));
    }
  });
});

describe('submission leases', () => {
  const key = () => `test/${Math.random().toString(36).slice(2)}`;

  it('is held by one token at a time, and a newer waiting token stops renewals', async () => {
    const lease = key();
    const older = await newLeaseToken(stack.sql);
    const newer = await newLeaseToken(stack.sql);
    expect(await claimLease(stack.sql, lease, older, 5_000)).toEqual({ held: true });
    const waiting = await claimLease(stack.sql, lease, newer, 5_000);
    expect(waiting).toMatchObject({ held: false });
    expect((waiting as { waitMs: number }).waitMs).toBeGreaterThan(4_000);
    expect(await renewLease(stack.sql, lease, older, 5_000)).toBe(false);
    // Released by its holder, it goes to the newer token at once.
    await releaseLease(stack.sql, lease, older);
    expect(await claimLease(stack.sql, lease, newer, 5_000)).toEqual({ held: true });
    expect(await renewLease(stack.sql, lease, newer, 5_000)).toBe(true);
  });

  it('goes to exactly one of 30 attempts claiming it at once', async () => {
    const lease = key();
    const tokens = await Promise.all(Array.from({ length: 30 }, () => newLeaseToken(stack.sql)));
    const claims = await Promise.all(
      tokens.map((token) => claimLease(stack.sql, lease, token, 5_000)),
    );
    const holders = tokens.filter((_, index) => claims[index]?.held);
    expect(holders).toHaveLength(1);
    const [row] = await stack.sql<{ token: number }[]>`
      select token from submission_leases where lease_key = ${lease}`;
    expect(row?.token).toBe(holders[0]);
    // Only that one renews it; every other token is refused.
    const renewals = await Promise.all(
      tokens.map((token) => renewLease(stack.sql, lease, token, 5_000)),
    );
    expect(tokens.filter((_, index) => renewals[index])).toEqual(
      holders[0] === Math.max(...tokens) ? holders : [],
    );
  });

  it('never goes back to an older token once a newer one held it', async () => {
    const lease = key();
    const older = await newLeaseToken(stack.sql);
    const newer = await newLeaseToken(stack.sql);
    expect(await claimLease(stack.sql, lease, newer, 5_000)).toEqual({ held: true });
    await releaseLease(stack.sql, lease, newer);
    expect(await claimLease(stack.sql, lease, older, 5_000)).toEqual({
      held: false,
      superseded: true,
    });
  });

  it('is taken in one round trip only while nobody holds it, with the newest token', async () => {
    const lease = key();
    const first = await claimFreeLease(stack.sql, lease, 200);
    expect(first).toEqual(expect.any(Number));
    expect(await claimFreeLease(stack.sql, lease, 5_000)).toBeNull();
    expect(await claimLease(stack.sql, lease, await newLeaseToken(stack.sql), 5_000)).toMatchObject(
      { held: false },
    );
    await sleep(300);
    // The waiting token lost nothing: the free claim's token is newer still, and fences it out.
    const second = await claimFreeLease(stack.sql, lease, 5_000);
    expect(second).toBeGreaterThan(first as number);
    expect(await renewLease(stack.sql, lease, first as number, 5_000)).toBe(false);
  });

  it('is not renewed after it ran out', async () => {
    const lease = key();
    const token = await newLeaseToken(stack.sql);
    expect(await claimLease(stack.sql, lease, token, 200)).toEqual({ held: true });
    await sleep(300);
    expect(await renewLease(stack.sql, lease, token, 5_000)).toBe(false);
  });

  it('is deleted by maintenance a day after it ended, not before', async () => {
    const [stale, recent] = [key(), key()];
    for (const lease of [stale, recent])
      await claimLease(stack.sql, lease, await newLeaseToken(stack.sql), 5_000);
    await stack.sql`
      update submission_leases set expires_at = now() - interval '25 hours' where lease_key = ${stale}`;
    await stack.sql`
      update submission_leases set expires_at = now() - interval '23 hours' where lease_key = ${recent}`;
    expect(await deleteStaleLeases(stack.sql, 5000)).toBeGreaterThanOrEqual(1);
    const left = await stack.sql<{ leaseKey: string }[]>`
      select lease_key from submission_leases where lease_key = any(${[stale, recent]})`;
    expect(left.map((row) => row.leaseKey)).toEqual([recent]);
  });
});

async function campaignStatus(campaignId: number) {
  const [row] = await stack.sql<{ status: string; completedAt: Date | null }[]>`
    select status, completed_at from campaigns where id = ${campaignId}`;
  return row;
}

// The chunk that settles a campaign's last queued message completes the campaign (and says so),
// so the workflow needs no completion step of its own; any other chunk leaves it running.
describe('campaign completion by its last chunk', () => {
  it('completes the campaign with the chunk that leaves nothing queued, and only then', async () => {
    const recipients = numbers(6);
    const campaignId = await campaignOf(recipients);

    expect(
      await attempt(1).run(activities.submitChunk, { campaignId, fromSeq: 4, toSeq: 6 }),
    ).toEqual({ completed: false });
    expect((await campaignStatus(campaignId))?.completedAt).toBeNull();

    expect(
      await attempt(1).run(activities.submitChunk, { campaignId, fromSeq: 1, toSeq: 3 }),
    ).toEqual({ completed: true });
    const completed = await campaignStatus(campaignId);
    expect(completed?.status).toBe('completed');

    // A retry of a chunk already done (its answer was lost) sends nothing and answers the same.
    expect(
      await attempt(2).run(activities.submitChunk, { campaignId, fromSeq: 4, toSeq: 6 }),
    ).toEqual({ completed: true });
    expect(await campaignStatus(campaignId)).toEqual(completed);
    const received = await Promise.all(recipients.map((to) => inbox(simulator.url, to)));
    expect(received.map((messages) => messages.length)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('completes it when its last two chunks finish at the same moment', async () => {
    const recipients = numbers(8);
    const campaignId = await campaignOf(recipients);
    const answers = await Promise.all(
      [1, 3, 5, 7].map((fromSeq) =>
        attempt(1).run(activities.submitChunk, { campaignId, fromSeq, toSeq: fromSeq + 1 }),
      ),
    );
    // Whichever settles last sees every other chunk's settle: at least one completes it.
    expect(answers.some((answer) => (answer as { completed: boolean }).completed)).toBe(true);
    expect((await campaignStatus(campaignId))?.status).toBe('completed');
  });
});
