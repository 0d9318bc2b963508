/**
 * A small campaign's first try beside its start (activities/first-try.ts): its messages leave
 * the moment it is saved, through the worker's own chunk runner, with no run of Temporal yet; it
 * never waits for a lease somebody else holds, and the run's attempt, raced against it, sends
 * nothing a second time. Counted where the user would: the simulator's inbox.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCampaignActivities, createChunkRunner } from '../../activities/campaign.js';
import { createFirstTries } from '../../activities/first-try.js';
import { SubmissionLease } from '../../activities/lease.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { inbox, numbers, saveDirectCampaign, simulatorProvider } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
let simulator: RunningSimulator;
let runChunk: ReturnType<typeof createChunkRunner>;
let activities: ReturnType<typeof createCampaignActivities>;
const logged: string[] = [];

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  simulator = await simulatorProvider(stack, tenant.workspaceId, 'first');
  const deps = {
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
  createFirstTries(runChunk, { slots, log: (line) => logged.push(line) });

function campaignOf(recipients: string[]) {
  return saveDirectCampaign(stack, tenant.workspaceId, {
    body: 'First try',
    providerSlug: 'first',
    recipients,
    validityHours: 1,
  });
}

const saved = (campaignId: number, messages: number, scheduledAt: Date | null = null) => ({
  campaignId,
  messages,
  scheduledAt,
});

async function timesReceived(recipients: string[]) {
  return Promise.all(recipients.map(async (to) => (await inbox(simulator.url, to)).length));
}

async function statusOf(campaignId: number) {
  const [row] = await stack.sql<{ status: string }[]>`
    select status from campaigns where id = ${campaignId}`;
  return row?.status;
}

describe('first tries beside the start', () => {
  it('sends a small campaign the moment it is saved, with no run, and completes it', async () => {
    const recipients = numbers(3);
    const campaignId = await campaignOf(recipients);
    const tries = firstTries(8);
    tries.begin(saved(campaignId, 3));
    await tries.drain();
    expect(await timesReceived(recipients)).toEqual([1, 1, 1]);
    expect(await statusOf(campaignId)).toBe('completed');
  });

  it('leaves a campaign of more than 10 messages, a scheduled one and one beyond its slots to their runs', async () => {
    const eleven = numbers(11);
    const large = await campaignOf(eleven);
    const laterRecipients = numbers(1);
    const later = await campaignOf(laterRecipients);
    const tries = firstTries(2);
    tries.begin(saved(large, 11));
    tries.begin(saved(later, 1, new Date(Date.now() + 3_600_000)));
    const inSlots = [numbers(1), numbers(1)];
    const beyondRecipients = numbers(1);
    const [a, b, beyond] = await Promise.all(
      [...inSlots, beyondRecipients].map((recipients) => campaignOf(recipients)),
    );
    for (const campaignId of [a, b, beyond]) tries.begin(saved(campaignId as number, 1));
    await tries.drain();
    expect({
      large: await timesReceived(eleven),
      later: await timesReceived(laterRecipients),
      inSlots: await timesReceived(inSlots.flat()),
      beyond: await timesReceived(beyondRecipients),
    }).toEqual({ large: Array(11).fill(0), later: [0], inSlots: [1, 1], beyond: [0] });
    expect(await statusOf(beyond as number)).toBe('paused');
  });

  it('gives way to an attempt that holds the lease; that attempt then sends each message once', async () => {
    const recipients = numbers(2);
    const campaignId = await campaignOf(recipients);
    const held = await SubmissionLease.acquire(stack.sql, `campaign/${campaignId}/1`);
    const tries = firstTries(8);
    tries.begin(saved(campaignId, 2));
    await tries.drain();
    expect(await timesReceived(recipients)).toEqual([0, 0]);
    await held.close();
    await new MockActivityEnvironment().run(activities.submitChunk, {
      campaignId,
      fromSeq: 1,
      toSeq: 2,
      quietHours: true,
    });
    expect(await timesReceived(recipients)).toEqual([1, 1]);
  });

  it('raced 30 ways against the run’s own first attempt: every message once, every campaign completed', async () => {
    const campaigns = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const recipients = numbers(2);
        return { recipients, campaignId: await campaignOf(recipients) };
      }),
    );
    const tries = firstTries(30);
    const results = await Promise.all(
      campaigns.map(({ campaignId }) => {
        tries.begin(saved(campaignId, 2));
        return new MockActivityEnvironment().run(activities.submitChunk, {
          campaignId,
          fromSeq: 1,
          toSeq: 2,
          quietHours: true,
        }) as Promise<{ completed: boolean }>;
      }),
    );
    await tries.drain();
    expect(results.every((result) => result.completed)).toBe(true);
    const received = await timesReceived(campaigns.flatMap(({ recipients }) => recipients));
    expect(received.filter((times) => times !== 1)).toEqual([]);
    const statuses = await Promise.all(campaigns.map(({ campaignId }) => statusOf(campaignId)));
    expect(new Set(statuses)).toEqual(new Set(['completed']));
    expect(logged).toEqual([]);
  });
});
