import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { searchAttributes } from './definitions.js';

const {
  purgeExpiredIdempotencyKeys,
  failUnsentOtpRequests,
  deleteAbandonedOAuthClients,
  deleteOldWebhookEvents,
  deleteIdleSendSlots,
} = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

export interface MaintenanceResult {
  idempotencyKeysPurged: number;
  unsentOtpRequestsFailed: number;
  abandonedOAuthClientsDeleted: number;
  webhookEventsDeleted: number;
  idleSendSlotsDeleted: number;
}

const BATCH_SIZE = 5000;

/** Runs `step` in batches until a batch comes back short; returns the total. */
async function inBatches(step: (input: { batchSize: number }) => Promise<number>) {
  let total = 0;
  for (;;) {
    const done = await step({ batchSize: BATCH_SIZE });
    total += done;
    if (done < BATCH_SIZE) return total;
  }
}

/**
 * Daily housekeeping, in bounded batches: drops idempotency records past their retention, and
 * fails and refunds OTP requests whose code expired before it could be submitted, and deletes
 * OAuth client registrations that never completed consent within 30 days, webhook events (and
 * their attempts) dispatched over 30 days ago, and throughput slots idle for a day.
 */
export async function maintenanceWorkflow(): Promise<MaintenanceResult> {
  const idempotencyKeysPurged = await inBatches(purgeExpiredIdempotencyKeys);
  const unsentOtpRequestsFailed = await inBatches(failUnsentOtpRequests);
  const abandonedOAuthClientsDeleted = await inBatches(deleteAbandonedOAuthClients);
  const webhookEventsDeleted = await inBatches(deleteOldWebhookEvents);
  const idleSendSlotsDeleted = await deleteIdleSendSlots();
  upsertSearchAttributes({ [searchAttributes.status.name]: ['completed'] });
  return {
    idempotencyKeysPurged,
    unsentOtpRequestsFailed,
    abandonedOAuthClientsDeleted,
    webhookEventsDeleted,
    idleSendSlotsDeleted,
  };
}
