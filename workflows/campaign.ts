import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { searchAttributes } from './definitions.js';

export interface CampaignWorkflowInput {
  campaignId: number;
}

/** Recipients per submission activity, and how many such activities run at once. */
export const CHUNK_SIZE = 100;
const CHUNKS_IN_FLIGHT = 4;

const { planCampaign, completeCampaign } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const { submitChunk } = proxyActivities<Activities>({
  // A chunk paced to a slow provider shared by many campaigns can take long; a lost worker is
  // noticed by the heartbeat timeout, not this one.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
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
  upsertSearchAttributes({ [searchAttributes.status.name]: ['completed'] });
}
