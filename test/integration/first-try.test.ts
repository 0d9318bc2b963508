/**
 * A small campaign's first try beside its start (activities/first-try.ts): reserved before the
 * save, its chunk's lease taken in the save's transaction, its messages leave the moment it is
 * saved, through the worker's own chunk runner, with no run of Temporal yet; it never waits for a
 * lease somebody else holds, and the run's attempt, raced against it, sends nothing a second time.
 * Counted where the user would: the simulator's inbox.
 */
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CampaignActivityDeps,
  createCampaignActivities,
  createChunkRunner,
} from '../../activities/campaign.js';
import { createFirstTries } from '../../activities/first-try.js';
import { SubmissionLease } from '../../activities/lease.js';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { createOtpSubmitter } from '../../activities/otp.js';
import { parseEnv } from '../../config/env.js';
import { addCredits } from '../../db/credits.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { buildApp } from '../../server/app.js';
import { inbox, numbers, saveDirectCampaign, simulatorProvider } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
let simulator: RunningSimulator;
let runChunk: ReturnType<typeof createChunkRunner>;
let activities: ReturnType<typeof createCampaignActivities>;
let deps: CampaignActivityDeps;
const logged: string[] = [];

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  simulator = await simulatorProvider(stack, tenant.workspaceId, 'first');
  await addCredits(stack.sql, tenant.workspaceId, 100);
  deps = {
    sql: stack.sql,
    ownProviderUrl: simulator.url,
    publicUrl: 'http://herald.test',
    secret: stack.admin.secret,
  };
  runChunk = createChunkRunner(deps);
  activities = createCampaignActivities(deps, runChunk);
});

afterAll(async () => {
  await simulator?.close();
  await stack?.close();
});

const firstTries = (slots: number) =>
  createFirstTries(deps, runChunk, createOtpSubmitter(deps), {
    slots,
    log: (line) => logged.push(line),
  });

type Tries = ReturnType<typeof firstTries>;

/**
 * Saves a campaign as a REST send does with a first try: reserved before the save, held in its
 * transaction, begun once it committed. Returns the campaign and whether a try was made.
 */
async function saveAndTry(tries: Tries, recipients: string[], scheduledAt: Date | null = null) {
  const reserved = tries.reserve({ messages: recipients.length, scheduledAt });
  const campaignId = await campaignOf(recipients, async (tx, { id }) => reserved?.hold(tx, id));
  await reserved?.begin(recipients.length);
  return { campaignId, tried: reserved !== undefined };
}

function campaignOf(recipients: string[], alongside?: Parameters<typeof saveDirectCampaign>[3]) {
  return saveDirectCampaign(
    stack,
    tenant.workspaceId,
    { body: 'First try', providerSlug: 'first', recipients, validityHours: 1 },
    alongside,
  );
}

async function timesReceived(recipients: string[]) {
  return Promise.all(recipients.map(async (to) => (await inbox(simulator.url, to)).length));
}

async function statusOf(campaignId: number) {
  const [row] = await stack.sql<{ status: string }[]>`
    select status from campaigns where id = ${campaignId}`;
  return row?.status;
}

const submitChunk = (campaignId: number, toSeq: number) =>
  new MockActivityEnvironment().run(activities.submitChunk, {
    campaignId,
    fromSeq: 1,
    toSeq,
    quietHours: true,
  }) as Promise<{ completed: boolean }>;

/** The api with first tries beside it, as `herald start` wires it; `temporal` may be away. */
function appWithFirstTries(temporal: Client) {
  return buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
      publicUrl: PUBLIC_URL,
      secret: stack.admin.secret,
      sql: stack.sql,
      temporal,
      firstTries: firstTries(8),
    },
    { logger: false },
  );
}

async function sendCode(app: ReturnType<typeof appWithFirstTries>, recipient: string) {
  const answer = await app.inject({
    method: 'POST',
    url: '/api/v1/otp/send',
    headers: { authorization: `Bearer ${tenant.token}` },
    payload: { recipient, purpose: 'first-try', provider_slug: 'first' },
  });
  return answer.json().data as { request_id: string; status: string };
}

describe('an OTP code beside its run', () => {
  it('leaves before its run starts; the run reports it accepted, and it verifies: sent once', async () => {
    const app = appWithFirstTries(stack.temporal);
    const [recipient] = numbers(1) as [string];
    const sent = await sendCode(app, recipient);
    const messages = await inbox(simulator.url, recipient);
    const code = /(\d{6,8})/.exec(messages[0]?.body ?? '')?.[1];
    const verified = await app.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipient, code, request_id: sent.request_id },
    });
    expect({
      status: sent.status,
      received: messages.length,
      verified: verified.statusCode,
    }).toEqual({ status: 'accepted', received: 1, verified: 200 });
    await app.close();
  });

  it('leaves with Temporal away: on the phone, answered accepted, and given its outcome by maintenance once expired', async () => {
    const app = appWithFirstTries(
      new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    );
    const [recipient] = numbers(1) as [string];
    const sent = await sendCode(app, recipient);
    await app.close();
    // No run was started: past its expiry, the maintenance sweep finishes it as its run would.
    await stack.sql`
      update otp_requests set expires_at = now() - interval '16 minutes'
      where id = ${sent.request_id}`;
    const { failUnsentOtpRequests } = createMaintenanceActivities({ sql: stack.sql });
    await failUnsentOtpRequests({ batchSize: 1000 });
    const [row] = await stack.sql<{ status: string; outcome: string }[]>`
      select status, outcome from otp_requests where id = ${sent.request_id}`;
    expect({
      answered: sent.status,
      received: (await inbox(simulator.url, recipient)).length,
      ...row,
    }).toEqual({ answered: 'accepted', received: 1, status: 'accepted', outcome: 'expired' });
  });
});

describe('first tries beside the start', () => {
  it('sends a small campaign the moment it is saved, with no run, and completes it', async () => {
    const recipients = numbers(3);
    const tries = firstTries(8);
    const { campaignId, tried } = await saveAndTry(tries, recipients);
    await tries.drain();
    expect(tried).toBe(true);
    expect(await timesReceived(recipients)).toEqual([1, 1, 1]);
    expect(await statusOf(campaignId)).toBe('completed');
  });

  it('leaves a campaign of more than 10 messages, a scheduled one and one beyond its slots to their runs', async () => {
    const tries = firstTries(2);
    const eleven = numbers(11);
    const laterRecipients = numbers(1);
    const large = await saveAndTry(tries, eleven);
    const later = await saveAndTry(tries, laterRecipients, new Date(Date.now() + 3_600_000));
    // Two reserved at once take both slots: a third finds none until one of them ends.
    const inSlots = [
      tries.reserve({ messages: 1, scheduledAt: null }),
      tries.reserve({ messages: 1, scheduledAt: null }),
    ];
    const beyondRecipients = numbers(1);
    const beyond = await saveAndTry(tries, beyondRecipients);
    for (const reserved of inSlots) reserved?.cancel();
    const afterRecipients = numbers(1);
    const after = await saveAndTry(tries, afterRecipients);
    await tries.drain();
    expect({
      tried: [large.tried, later.tried, inSlots.every(Boolean), beyond.tried, after.tried],
      large: await timesReceived(eleven),
      later: await timesReceived(laterRecipients),
      beyond: await timesReceived(beyondRecipients),
      after: await timesReceived(afterRecipients),
    }).toEqual({
      tried: [false, false, true, false, true],
      large: Array(11).fill(0),
      later: [0],
      beyond: [0],
      after: [1],
    });
    expect(await statusOf(beyond.campaignId)).toBe('paused');
  });

  it('gives way to an attempt that holds the lease; that attempt then sends each message once', async () => {
    const recipients = numbers(2);
    const tries = firstTries(1);
    const reserved = tries.reserve({ messages: 2, scheduledAt: null });
    let held: SubmissionLease | undefined;
    const campaignId = await campaignOf(recipients, async (_tx, { id }) => {
      // Someone else's lease, committed before this save's own attempt at it.
      held = await SubmissionLease.acquire(stack.sql, `campaign/${id}/1`);
    });
    await stack.sql.begin((tx) => reserved?.hold(tx, campaignId) as Promise<void>);
    await reserved?.begin(2);
    await tries.drain();
    expect(await timesReceived(recipients)).toEqual([0, 0]);
    // The slot was given back.
    expect(tries.reserve({ messages: 1, scheduledAt: null })).toBeDefined();
    await held?.close();
    await submitChunk(campaignId, 2);
    expect(await timesReceived(recipients)).toEqual([1, 1]);
  });

  it('a save that rolls back leaves no lease behind: the run’s attempt takes the chunk at once', async () => {
    const recipients = numbers(1);
    const tries = firstTries(1);
    const reserved = tries.reserve({ messages: 1, scheduledAt: null });
    let campaignId = 0;
    await expect(
      campaignOf(recipients, async (tx, { id }) => {
        campaignId = id;
        await reserved?.hold(tx, id);
        throw new Error('refused after the hold');
      }),
    ).rejects.toThrow('refused after the hold');
    reserved?.cancel();
    expect(tries.reserve({ messages: 1, scheduledAt: null })).toBeDefined();
    const lease = await SubmissionLease.acquireIfFree(stack.sql, `campaign/${campaignId}/1`);
    expect(lease).toBeDefined();
    await lease?.close();
  });

  it('raced 30 ways against the run’s own first attempt: every message once, every campaign completed', async () => {
    const tries = firstTries(30);
    const results = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const recipients = numbers(2);
        const reserved = tries.reserve({ messages: 2, scheduledAt: null });
        const campaignId = await campaignOf(recipients, async (tx, { id }) =>
          reserved?.hold(tx, id),
        );
        const [result] = await Promise.all([submitChunk(campaignId, 2), reserved?.begin(2)]);
        return { recipients, campaignId, result };
      }),
    );
    await tries.drain();
    expect(results.every(({ result }) => result.completed)).toBe(true);
    const received = await timesReceived(results.flatMap(({ recipients }) => recipients));
    expect(received.filter((times) => times !== 1)).toEqual([]);
    const statuses = await Promise.all(results.map(({ campaignId }) => statusOf(campaignId)));
    expect(new Set(statuses)).toEqual(new Set(['completed']));
    expect(logged).toEqual([]);
  });
});
