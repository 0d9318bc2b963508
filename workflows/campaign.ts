import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface CampaignWorkflowInput {
  campaignId: number;
  /** Its messages, counted when it was dispatched; absent from runs dispatched before that. */
  total?: number;
}

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

/** Planning or completing a campaign is a few queries; taking longer means Postgres is away. */
const BOOKKEEPING_QUERIES_TIMEOUT = '30 seconds';
/**
 * A chunk is paced to its provider's throughput, which other campaigns share: behind a backlog it
 * can take long. A lost worker is noticed by the heartbeat timeout, not this one.
 */
const CHUNK_PACED_BEHIND_OTHER_CAMPAIGNS_TIMEOUT = '2 hours';
/** submitChunk beats every 2 s: a worker silent this long is lost, and the chunk resumes elsewhere. */
const LOST_WORKER_NOTICED_WITHIN = '10 seconds';

const { planCampaign, completeCampaign } = proxyActivities<Activities>({
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

/** Runs `submit` over `chunks` in at most CHUNKS_IN_FLIGHT lanes; whether any completed it. */
async function inLanes(
  chunks: { fromSeq: number; toSeq: number }[],
  submit: (chunk: { fromSeq: number; toSeq: number }) => Promise<boolean>,
): Promise<boolean> {
  let completed = false;
  const lanes = Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, async () => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      if (await submit(chunk)) completed = true;
    }
  });
  await Promise.all(lanes);
  return completed;
}

/** Submits every message of a campaign in chunks, then marks the campaign completed. */
export async function campaignWorkflow({
  campaignId,
  total,
}: CampaignWorkflowInput): Promise<void> {
  if (patched(SIZED_CHUNKS_PATCH)) {
    const count = total ?? (await planCampaign({ campaignId })).total;
    const completed = await inLanes(chunksOf(count, chunkSizeFor(count)), async (chunk) => {
      // A worker of an older build answers nothing: then completeCampaign below does it.
      const result = await submitChunk({ campaignId, ...chunk });
      return result?.completed === true;
    });
    if (!completed) await completeCampaign({ campaignId });
  } else {
    const planned = await planCampaign({ campaignId });
    await inLanes(chunksOf(planned.total, LEGACY_CHUNK_SIZE), async (chunk) => {
      await submitChunk({ campaignId, ...chunk });
      return false;
    });
    await completeCampaign({ campaignId });
  }
  setRunStatus('completed');
}
