import { randomBytes } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCampaignActivities } from '../../activities/campaign.js';
import { reconcileRestore } from '../../commands/operations/after-restore.js';
import { ensureDatabase } from '../../db/bootstrap.js';
import { cancelCampaign } from '../../db/campaign-lifecycle.js';
import { recordDispatch } from '../../db/campaigns.js';
import { createSql, type Sql } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { campaignMessageReference } from '../../domain/message-reference.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import { TEST_OPERATOR } from '../support/actors.js';
import {
  inbox,
  messageRows,
  numbers,
  saveDirectCampaign,
  simulatorProvider,
} from '../support/send.js';
import { createTenant, openStack, type Stack } from '../support/stack.js';

/**
 * `herald restore reconcile` (docs/operations.md "Backups and restore") on a database of its own: the command
 * acts on every campaign of a database, and the suite's shared one holds other files' campaigns.
 * A restored database holds as queued what the lost site may have sent after the backup.
 */

let stack: Stack;
let restored: Sql;
let simulator: RunningSimulator;
let workspaceId: number;

beforeAll(async () => {
  stack = await openStack();
  const name = `restored_${randomBytes(4).toString('hex')}`;
  const url = new URL(inject('databaseUrl'));
  await ensureDatabase(url.toString(), name);
  url.pathname = `/${name}`;
  restored = createSql(url.toString(), { max: 4 });
  await migrate(restored);
  const tenant = await createTenant({ ...stack.admin, sql: restored });
  workspaceId = tenant.workspaceId;
  simulator = await simulatorProvider({ ...stack, sql: restored }, workspaceId, 'restored');
}, 60_000);

afterAll(async () => {
  await simulator?.close();
  await restored?.end();
  await stack?.close();
});

/** What the lost site did after the backup: submitted the message, recorded nothing that survived. */
async function sentByTheLostSite(campaignId: number, seq: number, to: string, body: string) {
  const response = await fetch(`${simulator.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ to, body, reference: campaignMessageReference(campaignId, seq) }),
  });
  expect(response.status).toBe(202);
}

describe('herald restore reconcile', () => {
  it('sends nothing twice that the lost site sent after the backup, and the rest once', async () => {
    const recipients = numbers(6);
    const body = 'Restored';
    const campaignId = await saveDirectCampaign({ ...stack, sql: restored }, workspaceId, {
      body,
      providerSlug: 'restored',
      recipients,
      validityHours: 1,
    });
    // Dispatched before the backup: queued, with its workflow id.
    await restored`
      update campaigns set status = 'queued', workflow_id = ${`campaign/${workspaceId}/id-${campaignId}`}
      where id = ${campaignId}`;
    for (const seq of [1, 2, 3])
      await sentByTheLostSite(campaignId, seq, recipients[seq - 1] as string, body);

    expect(await reconcileRestore({ sql: restored }, TEST_OPERATOR)).toEqual({
      campaignMessages: 6,
      otpRequests: 0,
      campaigns: 1,
    });
    const [campaign] = await restored`select status from campaigns where id = ${campaignId}`;
    expect(campaign?.status).toBe('paused');

    const activities = createCampaignActivities({
      sql: restored,
      ownProviderUrl: simulator.url,
      publicUrl: 'http://herald.test',
      secret: stack.admin.secret,
    });
    await new MockActivityEnvironment({ attempt: 1, heartbeatTimeoutMs: 10_000 }).run(
      activities.submitChunk,
      { campaignId, fromSeq: 1, toSeq: 6 },
    );
    const received = await Promise.all(
      recipients.map(async (to) => (await inbox(simulator.url, to)).length),
    );
    expect(received).toEqual([1, 1, 1, 1, 1, 1]);
    const rows = await messageRows({ ...stack, sql: restored }, campaignId);
    expect(rows.map((row) => row.status)).toEqual(Array(6).fill('sent'));
  }, 60_000);

  it('pauses a scheduled campaign too, so it is dispatched again, and scheduled again', async () => {
    const campaignId = await saveDirectCampaign({ ...stack, sql: restored }, workspaceId, {
      body: 'Later',
      providerSlug: 'restored',
      recipients: numbers(2),
      sendAt: new Date(Date.now() + 3_600_000),
    });
    const workflowId = `campaign/${workspaceId}/id-${campaignId}`;
    await restored`
      update campaigns set status = 'scheduled', workflow_id = ${workflowId}
      where id = ${campaignId}`;
    expect(await reconcileRestore({ sql: restored }, TEST_OPERATOR)).toEqual({
      campaignMessages: 2,
      otpRequests: 0,
      campaigns: 1,
    });
    const status = async () =>
      (
        await restored<{ status: string }[]>`select status from campaigns where id = ${campaignId}`
      )[0]?.status;
    expect(await status()).toBe('paused');
    await recordDispatch(restored, campaignId, workflowId);
    expect(await status()).toBe('scheduled');
    // Canceled, as the second reconcile below expects nothing unfinished.
    expect(await cancelCampaign(restored, workspaceId, campaignId)).toMatchObject({
      kind: 'canceled',
    });
  });

  it('marks nothing the second time', async () => {
    expect(await reconcileRestore({ sql: restored }, TEST_OPERATOR)).toEqual({
      campaignMessages: 0,
      otpRequests: 0,
      campaigns: 0,
    });
  });
});
