/**
 * The daily maintenance workflow gains steps while its schedule is running. A run recorded before
 * a step existed (on a Temporal dev server, with the workflow code of that time:
 * scripts/record-maintenance-history.ts) must replay on today's code without a nondeterminism
 * error: each step runs only in runs that start after it existed (`patched`). The histories are
 * stored as @temporalio/proto's own object form, which it reads back with `fromObject`.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const { History } = proto.temporal.api.history.v1;

async function recorded(name: string) {
  const fixture = new URL(`../fixtures/${name}.history.json`, import.meta.url);
  return History.fromObject(JSON.parse(await readFile(fixture, 'utf8')));
}

function scheduledActivities(history: proto.temporal.api.history.v1.History): string[] {
  return history.events.flatMap(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
}

const replay = (history: proto.temporal.api.history.v1.History) =>
  Worker.runReplayHistory({ workflowsPath }, history, 'herald-daily-maintenance');

describe('maintenanceWorkflow', () => {
  it('replays a run recorded before the orphan-campaign step', { timeout: 60_000 }, async () => {
    const history = await recorded('maintenance-before-orphan-step');
    expect(scheduledActivities(history)).toEqual([
      'purgeExpiredIdempotencyKeys',
      'failUnsentOtpRequests',
      'deleteAbandonedOAuthClients',
      'deleteOldWebhookEvents',
      'deleteIdleSendSlots',
    ]);
    await expect(replay(history)).resolves.toBeUndefined();
  });

  it('replays a run recorded before the OAuth purge step', { timeout: 60_000 }, async () => {
    const history = await recorded('maintenance-before-oauth-purge');
    expect(scheduledActivities(history)).toEqual([
      'closeOrphanCampaigns',
      'purgeExpiredIdempotencyKeys',
      'failUnsentOtpRequests',
      'deleteAbandonedOAuthClients',
      'deleteOldWebhookEvents',
      'deleteIdleSendSlots',
      'deleteStaleSubmissionLeases',
    ]);
    await expect(replay(history)).resolves.toBeUndefined();
  });

  it('replays a run that purged expired OAuth records last', { timeout: 60_000 }, async () => {
    const history = await recorded('maintenance-with-oauth-purge');
    expect(scheduledActivities(history).at(-1)).toBe('purgeExpiredOAuthRecords');
    await expect(replay(history)).resolves.toBeUndefined();
  });
});
