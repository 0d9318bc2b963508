/**
 * Every recorded history (test/fixtures/*.history.json) replays on today's workflow code, so a
 * change that would break runs already in flight fails the build (README, "Changing a workflow
 * safely"). The histories were recorded on a Temporal dev server by
 * scripts/record-workflow-histories.ts, each with the workflow code of its time, and are stored as
 * @temporalio/proto's own object form, which it reads back with `fromObject`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import * as workflows from '../../workflows/index.js';

const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const FIXTURES = new URL('../fixtures/', import.meta.url);
const { History } = proto.temporal.api.history.v1;
type History = proto.temporal.api.history.v1.History;

interface Recorded {
  name: string;
  workflowType: string;
  workflowId: string;
  history: History;
}

async function recordedHistories(): Promise<Recorded[]> {
  const files = (await readdir(FIXTURES)).filter((file) => file.endsWith('.history.json')).sort();
  return Promise.all(
    files.map(async (file) => {
      const history = History.fromObject(
        JSON.parse(await readFile(new URL(file, FIXTURES), 'utf8')),
      );
      const started = history.events[0]?.workflowExecutionStartedEventAttributes;
      return {
        name: file.replace('.history.json', ''),
        workflowType: started?.workflowType?.name ?? '(no start event)',
        workflowId: started?.workflowId || file,
        history,
      };
    }),
  );
}

function scheduledActivities(history: History): string[] {
  return history.events.flatMap(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
}

let recorded: Recorded[];

beforeAll(async () => {
  // The replay worker's state changes are not news here.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  recorded = await recordedHistories();
});

describe('workflow replay', () => {
  it('has a recorded history of every workflow type', () => {
    const recordedTypes = [...new Set(recorded.map((history) => history.workflowType))].sort();
    expect(recordedTypes).toEqual(Object.keys(workflows).sort());
  });

  it('replays every recorded history on the workflow code of today', {
    timeout: 120_000,
  }, async () => {
    const failures: string[] = [];
    let replayed = 0;
    const results = Worker.runReplayHistories({ workflowsPath }, recorded);
    for await (const result of results) {
      const { name } = recorded[replayed] as Recorded;
      replayed++;
      if (result.error) failures.push(`${name}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(recorded.length);
  });

  it('keeps a campaign run of each branch of its sized-chunks patch', () => {
    const byName = new Map(recorded.map((entry) => [entry.name, entry.history]));
    const scheduledIn = (name: string) => scheduledActivities(byName.get(name) as History);
    expect(scheduledIn('campaign-in-lanes')).toEqual([
      'planCampaign',
      ...Array(6).fill('submitChunk'),
      'completeCampaign',
    ]);
    expect(scheduledIn('campaign-sized-chunks')).toEqual(Array(5).fill('submitChunk'));
    expect(scheduledIn('campaign-of-one')).toEqual(['submitChunk']);
  });

  it('keeps a scheduled campaign run, one canceled while it waited and one canceled while sending', () => {
    const byName = new Map(recorded.map((entry) => [entry.name, entry.history]));
    const history = (name: string) => byName.get(name) as History;
    const timers = (name: string) =>
      history(name).events.filter((event) => event.timerStartedEventAttributes).length;
    expect(scheduledActivities(history('campaign-scheduled'))).toEqual([
      'beginScheduledCampaign',
      'submitChunk',
    ]);
    expect(timers('campaign-scheduled')).toBe(1);
    expect(scheduledActivities(history('campaign-canceled-scheduled'))).toEqual([]);
    expect(timers('campaign-canceled-scheduled')).toBe(1);
    // Ten chunks; the signal came while the first four ran in their lanes.
    expect(scheduledActivities(history('campaign-canceled-sending'))).toEqual([
      ...Array(4).fill('submitChunk'),
      'completeCampaign',
    ]);
  });

  it('keeps a campaign run that waited for quiet hours twice, and one canceled while it waited', () => {
    const byName = new Map(recorded.map((entry) => [entry.name, entry.history]));
    const history = (name: string) => byName.get(name) as History;
    const count = (name: string, kind: 'timerStarted' | 'timerFired' | 'timerCanceled') =>
      history(name).events.filter((event) => event[`${kind}EventAttributes`]).length;
    const chunkInputs = (name: string) =>
      history(name).events.flatMap((event) => {
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled?.activityType?.name !== 'submitChunk') return [];
        const data = scheduled.input?.payloads?.[0]?.data;
        return [JSON.parse(Buffer.from(data ?? []).toString('utf8'))];
      });
    const chunk = { campaignId: 107, fromSeq: 1, toSeq: 3, quietHours: true };
    expect(chunkInputs('campaign-quiet-hours')).toEqual([chunk, chunk, chunk]);
    expect(count('campaign-quiet-hours', 'timerFired')).toBe(2);
    expect(scheduledActivities(history('campaign-quiet-hours-canceled'))).toEqual([
      'submitChunk',
      'completeCampaign',
    ]);
    expect(count('campaign-quiet-hours-canceled', 'timerStarted')).toBe(1);
    expect(count('campaign-quiet-hours-canceled', 'timerCanceled')).toBe(1);
    // Runs recorded before the patch never asked their chunks to keep quiet hours.
    expect(chunkInputs('campaign-sized-chunks').every((input) => !('quietHours' in input))).toBe(
      true,
    );
  });

  it('keeps a webhook run of each branch of its lanes patch, a lane delivering in order', () => {
    const byName = new Map(recorded.map((entry) => [entry.name, entry.history]));
    const history = (name: string) => byName.get(name) as History;
    const patchedIn = (name: string) =>
      history(name).events.some((event) => event.markerRecordedEventAttributes);
    const deliveriesIn = (name: string) =>
      history(name).events.flatMap((event) => {
        const data = event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
        if (!data) return [];
        const input = JSON.parse(Buffer.from(data).toString('utf8'));
        return [`${input.eventId}#${input.attempt}`];
      });
    expect(patchedIn('webhook-retried')).toBe(false);
    expect(deliveriesIn('webhook-retried')).toEqual([
      'msg_fixture_retried#1',
      'msg_fixture_retried#2',
    ]);
    // The receipt's event was signalled during message.sent's retry delay, and went after it.
    expect(patchedIn('webhook-lane')).toBe(true);
    expect(deliveriesIn('webhook-lane')).toEqual([
      'msg_fixture_lane_sent#1',
      'msg_fixture_lane_sent#2',
      'msg_fixture_lane_delivered#1',
    ]);
  });

  it('keeps the daily maintenance runs recorded before each of its patched steps', () => {
    const byName = new Map(recorded.map((entry) => [entry.name, entry.history]));
    const scheduledIn = (name: string) => scheduledActivities(byName.get(name) as History);
    expect(scheduledIn('maintenance-before-orphan-step')).toEqual([
      'purgeExpiredIdempotencyKeys',
      'failUnsentOtpRequests',
      'deleteAbandonedOAuthClients',
      'deleteOldWebhookEvents',
      'deleteIdleSendSlots',
    ]);
    expect(scheduledIn('maintenance-before-oauth-purge')).toEqual([
      'closeOrphanCampaigns',
      'purgeExpiredIdempotencyKeys',
      'failUnsentOtpRequests',
      'deleteAbandonedOAuthClients',
      'deleteOldWebhookEvents',
      'deleteIdleSendSlots',
      'deleteStaleSubmissionLeases',
    ]);
    expect(scheduledIn('maintenance-with-oauth-purge').at(-1)).toBe('purgeExpiredOAuthRecords');
    expect(scheduledIn('maintenance-with-retention').slice(-2)).toEqual([
      'purgeExpiredOAuthRecords',
      'dropExpiredPersonalData',
    ]);
  });
});
