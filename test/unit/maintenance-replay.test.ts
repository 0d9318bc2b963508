/**
 * The daily maintenance workflow gained a step (closing orphan campaigns) while its schedule was
 * running. A run recorded before the step (on a Temporal dev server, with the workflow code of
 * that time) must replay on today's code without a nondeterminism error: the step runs only in
 * runs that start after it existed (`patched`). The history is stored as @temporalio/proto's own
 * object form, which it reads back with `fromObject`.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const recorded = new URL(
  '../fixtures/maintenance-before-orphan-step.history.json',
  import.meta.url,
);
const { History } = proto.temporal.api.history.v1;

describe('maintenanceWorkflow', () => {
  it('replays a run recorded before the orphan-campaign step', { timeout: 60_000 }, async () => {
    const history = History.fromObject(JSON.parse(await readFile(recorded, 'utf8')));
    const scheduled = history.events.flatMap(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(scheduled).toEqual([
      'purgeExpiredIdempotencyKeys',
      'failUnsentOtpRequests',
      'deleteAbandonedOAuthClients',
      'deleteOldWebhookEvents',
      'deleteIdleSendSlots',
    ]);
    await expect(
      Worker.runReplayHistory({ workflowsPath }, history, 'herald-daily-maintenance'),
    ).resolves.toBeUndefined();
  });
});
