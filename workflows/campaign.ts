import {
  condition,
  defineSignal,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { FIRST_TRY_MAX_MESSAGES } from '../domain/first-try.js';
import { CAMPAIGN_CANCELED_SIGNAL } from './definitions.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface CampaignWorkflowInput {
  campaignId: number;
  /** Its messages, counted when it was dispatched; absent from runs dispatched before that. */
  total?: number;
  /** ISO 8601: when to start sending (`send_at`); absent: at once. */
  sendAt?: string;
}

export const campaignCanceledSignal = defineSignal(CAMPAIGN_CANCELED_SIGNAL);

/** Chunks at most in flight per campaign; each submits BATCH_SIZE messages at once. */
const CHUNKS_IN_FLIGHT = 4;
/** Recipients per chunk of runs started before chunks were sized to the campaign. */
const LEGACY_CHUNK_SIZE = 100;
/**
 * A few recipients still make one chunk. A chunk holds a worker slot until it is done, and
 * workspaces take turns for slots (fairness), so chunks stay short enough for turns to come often.
 */
const MIN_CHUNK_SIZE = 100;
const MAX_CHUNK_SIZE = 250;
/**
 * Since this patch a run cuts its campaign into as few chunks as fill its lanes, reads its total
 * from its input when given, and lets the chunk that settles the last message complete it: every
 * activity is a task round trip through Temporal, which cost a 1-recipient send two of its three.
 */
const SIZED_CHUNKS_PATCH = 'campaign-sized-chunks';
/**
 * Since this patch a run asks its chunks to keep the workspace's quiet hours: a chunk that leaves
 * marketing messages waiting for their recipients' window says until when, and its lane sleeps on
 * a durable timer (a cancel wakes it) and runs the chunk again.
 */
const QUIET_HOURS_PATCH = 'campaign-quiet-hours';
/**
 * Since this patch a campaign of at most FIRST_TRY_MAX_MESSAGES messages is first submitted as a
 * local activity inside the run's first workflow task (which, started beside a worker, comes back
 * in the start's own answer): no activity task round trip through Temporal before its message
 * leaves. Beside such a worker the api has usually sent it already (activities/first-try.ts).
 */
const LOCAL_FIRST_CHUNK_PATCH = 'campaign-local-first-chunk';

/** A held chunk is run again no sooner than this: its messages' times are never busy-waited. */
const MIN_QUIET_HOURS_WAIT_MS = 1_000;

/** Planning or completing a campaign is a few queries; taking longer means Postgres is away. */
const BOOKKEEPING_QUERIES_TIMEOUT = '30 seconds';
/**
 * A chunk is paced to its provider's throughput, which other campaigns share: behind a backlog it
 * can take long. A lost worker is noticed by the heartbeat timeout, not this one.
 */
const CHUNK_PACED_BEHIND_OTHER_CAMPAIGNS_TIMEOUT = '2 hours';
/** submitChunk beats every 2 s: a worker silent this long is lost, and the chunk resumes elsewhere. */
const LOST_WORKER_NOTICED_WITHIN = '10 seconds';

const { planCampaign, completeCampaign, beginScheduledCampaign } = proxyActivities<Activities>({
  startToCloseTimeout: BOOKKEEPING_QUERIES_TIMEOUT,
  retry: retryUnlessPermanent({ initialInterval: '1 second', maximumInterval: '30 seconds' }),
});

const { submitChunk } = proxyActivities<Activities>({
  startToCloseTimeout: CHUNK_PACED_BEHIND_OTHER_CAMPAIGNS_TIMEOUT,
  heartbeatTimeout: LOST_WORKER_NOTICED_WITHIN,
  retry: retryUnlessPermanent({
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
  }),
});

/**
 * The local first try. It runs only when the worker has a local slot free at once: a busy worker
 * leaves it to the chunk activities below, whose slots workspaces share fairly. It is tried once;
 * whatever it leaves (a failure, a timeout, messages held for quiet hours) the chunks take on,
 * under the same submission lease, so nothing is sent twice.
 */
const { submitChunk: submitChunkLocally } = proxyLocalActivities<Activities>({
  scheduleToStartTimeout: '100 milliseconds',
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

/** Whether the local first try sent (or settled) every message and completed the campaign. */
async function completedLocally(campaignId: number, total: number): Promise<boolean> {
  try {
    const result = await submitChunkLocally({
      campaignId,
      fromSeq: 1,
      toSeq: total,
      quietHours: true,
    });
    return result.completed && result.heldUntil === undefined;
  } catch {
    return false;
  }
}

/** Recipients per chunk for a campaign of `total`: enough chunks to fill the lanes, no more. */
function chunkSizeFor(total: number): number {
  const filling = Math.ceil(total / CHUNKS_IN_FLIGHT);
  return Math.min(MAX_CHUNK_SIZE, Math.max(MIN_CHUNK_SIZE, filling));
}

/** Consecutive seq ranges of `size` covering 1..total. */
function chunksOf(total: number, size: number) {
  const chunks: { fromSeq: number; toSeq: number }[] = [];
  for (let fromSeq = 1; fromSeq <= total; fromSeq += size) {
    chunks.push({ fromSeq, toSeq: Math.min(total, fromSeq + size - 1) });
  }
  return chunks;
}

/**
 * Runs `submit` over `chunks` in at most CHUNKS_IN_FLIGHT lanes, each taking no new chunk once
 * `stopped` says so; whether any completed the campaign.
 */
async function inLanes(
  chunks: { fromSeq: number; toSeq: number }[],
  submit: (chunk: { fromSeq: number; toSeq: number }) => Promise<boolean>,
  stopped: () => boolean,
): Promise<boolean> {
  let completed = false;
  const lanes = Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, async () => {
    for (let chunk = chunks.shift(); chunk && !stopped(); chunk = chunks.shift()) {
      if (await submit(chunk)) completed = true;
    }
  });
  await Promise.all(lanes);
  return completed;
}

/**
 * Runs a chunk until none of its messages waits for quiet hours (or it is canceled): between runs
 * it sleeps until the first waiting message's window opens. Whether it completed the campaign.
 */
async function chunkAfterQuietHours(
  campaignId: number,
  chunk: { fromSeq: number; toSeq: number },
  canceled: () => boolean,
): Promise<boolean> {
  for (;;) {
    // A worker of an older build answers nothing: then completeCampaign after the lanes does it.
    const result = await submitChunk({ campaignId, ...chunk, quietHours: true });
    if (result?.heldUntil === undefined) return result?.completed === true;
    const wait = Math.max(MIN_QUIET_HOURS_WAIT_MS, Date.parse(result.heldUntil) - Date.now());
    // The cancel made the waiting messages canceled: nothing of this chunk is left to run.
    if (await condition(canceled, wait)) return false;
  }
}

/**
 * Waits until `sendAt` unless canceled first, then moves the campaign from scheduled to queued;
 * whether it is to be sent. A run without `sendAt` gives no command here, as before schedules.
 */
async function untilScheduled(
  campaignId: number,
  sendAt: string | undefined,
  canceled: () => boolean,
): Promise<boolean> {
  if (sendAt === undefined) return true;
  setRunStatus('scheduled');
  const wait = Date.parse(sendAt) - Date.now();
  if (wait > 0) await condition(canceled, wait);
  // A cancel that could not signal (Temporal was away) is in Postgres all the same.
  return !canceled() && (await beginScheduledCampaign({ campaignId })) !== 'canceled';
}

/**
 * Submits every message of a campaign in chunks (from `sendAt` when given), then marks the
 * campaign completed. A cancel (committed in Postgres, then signalled) stops it taking chunks;
 * the chunks it runs find nothing of a canceled campaign left to claim.
 */
export async function campaignWorkflow({
  campaignId,
  total,
  sendAt,
}: CampaignWorkflowInput): Promise<void> {
  let canceled = false;
  setHandler(campaignCanceledSignal, () => {
    canceled = true;
  });
  if (!(await untilScheduled(campaignId, sendAt, () => canceled))) {
    setRunStatus('canceled');
    return;
  }
  if (sendAt !== undefined) setRunStatus('queued');
  if (patched(SIZED_CHUNKS_PATCH)) {
    const count = total ?? (await planCampaign({ campaignId })).total;
    if (
      count > 0 &&
      count <= FIRST_TRY_MAX_MESSAGES &&
      patched(LOCAL_FIRST_CHUNK_PATCH) &&
      (await completedLocally(campaignId, count))
    ) {
      setRunStatus(canceled ? 'canceled' : 'completed');
      return;
    }
    const chunks = chunksOf(count, chunkSizeFor(count));
    const keepsQuietHours = patched(QUIET_HOURS_PATCH);
    const completed = await inLanes(
      chunks,
      async (chunk) => {
        if (keepsQuietHours) return chunkAfterQuietHours(campaignId, chunk, () => canceled);
        // A worker of an older build answers nothing: then completeCampaign below does it.
        const result = await submitChunk({ campaignId, ...chunk });
        return result?.completed === true;
      },
      () => canceled,
    );
    if (!completed) await completeCampaign({ campaignId });
  } else {
    const planned = await planCampaign({ campaignId });
    await inLanes(
      chunksOf(planned.total, LEGACY_CHUNK_SIZE),
      async (chunk) => {
        await submitChunk({ campaignId, ...chunk });
        return false;
      },
      () => canceled,
    );
    await completeCampaign({ campaignId });
  }
  setRunStatus(canceled ? 'canceled' : 'completed');
}
