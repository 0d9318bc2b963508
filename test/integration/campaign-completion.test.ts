/**
 * The chunk that settles a campaign's last queued message completes the campaign (and says so),
 * so the workflow needs no completion step of its own; any other chunk leaves it running.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCampaignActivities } from '../../activities/campaign.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { inbox, numbers, saveDirectCampaign, simulatorProvider } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
let simulator: RunningSimulator;
let activities: ReturnType<typeof createCampaignActivities>;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  simulator = await simulatorProvider(stack, tenant.workspaceId, 'carrier');
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

const submitChunk = (input: { campaignId: number; fromSeq: number; toSeq: number }) =>
  new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000 }).run(activities.submitChunk, input);

async function campaignStatus(campaignId: number) {
  const [row] = await stack.sql<{ status: string; completedAt: Date | null }[]>`
    select status, completed_at from campaigns where id = ${campaignId}`;
  return row;
}

describe('campaign completion by its last chunk', () => {
  it('completes the campaign with the chunk that leaves nothing queued, and only then', async () => {
    const recipients = numbers(6);
    const campaignId = await saveDirectCampaign(stack, tenant.workspaceId, {
      body: 'Last one out',
      providerSlug: 'carrier',
      recipients,
    });

    expect(await submitChunk({ campaignId, fromSeq: 4, toSeq: 6 })).toEqual({ completed: false });
    expect((await campaignStatus(campaignId))?.completedAt).toBeNull();

    expect(await submitChunk({ campaignId, fromSeq: 1, toSeq: 3 })).toEqual({ completed: true });
    const completed = await campaignStatus(campaignId);
    expect(completed?.status).toBe('completed');

    // A retry of a chunk already done (its answer was lost) sends nothing and answers the same.
    expect(await submitChunk({ campaignId, fromSeq: 4, toSeq: 6 })).toEqual({ completed: true });
    expect(await campaignStatus(campaignId)).toEqual(completed);
    const received = await Promise.all(recipients.map((to) => inbox(simulator.url, to)));
    expect(received.map((messages) => messages.length)).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
