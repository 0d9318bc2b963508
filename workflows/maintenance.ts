import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { searchAttributes } from './definitions.js';

const { purgeExpiredIdempotencyKeys } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

export interface MaintenanceResult {
  idempotencyKeysPurged: number;
}

/** Daily housekeeping: drops idempotency records past their retention, in bounded batches. */
export async function maintenanceWorkflow(): Promise<MaintenanceResult> {
  let idempotencyKeysPurged = 0;
  for (;;) {
    const purged = await purgeExpiredIdempotencyKeys({ batchSize: 5000 });
    idempotencyKeysPurged += purged;
    if (purged < 5000) break;
  }
  upsertSearchAttributes({ [searchAttributes.status.name]: ['completed'] });
  return { idempotencyKeysPurged };
}
