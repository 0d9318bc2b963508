import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface CampaignWorkflowInput {
  campaignId: number;
}

/** Recipients per submission activity, and how many such activities run at once. */
export const CHUNK_SIZE = 100;
const CHUNKS_IN_FLIGHT = 4;

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

/** Submits every message of a campaign in chunks, then marks the campaign completed. */
export async function campaignWorkflow({ campaignId }: CampaignWorkflowInput): Promise<void> {
  const { total } = await planCampaign({ campaignId });
  const chunks: { fromSeq: number; toSeq: number }[] = [];
  for (let fromSeq = 1; fromSeq <= total; fromSeq += CHUNK_SIZE) {
    chunks.push({ fromSeq, toSeq: Math.min(total, fromSeq + CHUNK_SIZE - 1) });
  }
  const lanes = Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, async () => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      await submitChunk({ campaignId, ...chunk });
    }
  });
  await Promise.all(lanes);
  await completeCampaign({ campaignId });
  setRunStatus('completed');
}
