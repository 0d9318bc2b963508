import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

/** One batch deletes or updates at most BATCH_SIZE rows; taking longer means Postgres is away. */
const ONE_BATCH_TIMEOUT = '1 minute';
/**
 * Then the run gives up (a failed run, visible in the UI): tomorrow's run does the same work, so an
 * outage longer than these retries costs nothing but a day's delay.
 */
const ATTEMPTS_BEFORE_LEAVING_IT_TO_TOMORROW = 10;

const {
  closeOrphanCampaigns,
  purgeExpiredIdempotencyKeys,
  failUnsentOtpRequests,
  deleteAbandonedOAuthClients,
  deleteOldWebhookEvents,
  deleteIdleSendSlots,
  deleteStaleSubmissionLeases,
  purgeExpiredOAuthRecords,
} = proxyActivities<Activities>({
  startToCloseTimeout: ONE_BATCH_TIMEOUT,
  retry: retryUnlessPermanent({ maximumAttempts: ATTEMPTS_BEFORE_LEAVING_IT_TO_TOMORROW }),
});

/** Retention's batches span several tables and heartbeat between them. */
const { dropExpiredPersonalData } = proxyActivities<Activities>({
  startToCloseTimeout: ONE_BATCH_TIMEOUT,
  heartbeatTimeout: '30 seconds',
  retry: retryUnlessPermanent({ maximumAttempts: ATTEMPTS_BEFORE_LEAVING_IT_TO_TOMORROW }),
});

export interface MaintenanceResult {
  /** Absent from runs that started before the step existed. */
  orphanCampaignsClosed?: number;
  idempotencyKeysPurged: number;
  unsentOtpRequestsFailed: number;
  abandonedOAuthClientsDeleted: number;
  webhookEventsDeleted: number;
  idleSendSlotsDeleted: number;
  /** Absent from runs that started before the step existed. */
  staleSubmissionLeasesDeleted?: number;
  /** Absent from runs that started before the step existed. */
  expiredOAuthRecordsPurged?: number;
  /** Rows whose personal data retention dropped; absent from runs before the step existed. */
  personalDataDropped?: number;
}

const BATCH_SIZE = 5000;
/** Campaigns per batch: each carries up to 1,000 message rows. */
const CAMPAIGN_BATCH_SIZE = 20;
/** The orphan-campaign step, added while schedules were running: older runs replay without it. */
const CLOSE_ORPHAN_CAMPAIGNS = 'close-orphan-campaigns';
/** Likewise the step that deletes submission leases a day past their end. */
const DELETE_STALE_SUBMISSION_LEASES = 'delete-stale-submission-leases';
/** Likewise the step that deletes expired OAuth records and the limits' old records. */
const PURGE_EXPIRED_OAUTH_RECORDS = 'purge-expired-oauth-records';
/** Likewise retention: bodies, texts and recipients older than RETENTION_DAYS. */
const DROP_EXPIRED_PERSONAL_DATA = 'drop-expired-personal-data';
/** OTP requests, failed verifications and webhook events per retention batch, each. */
const RETENTION_ROW_BATCH_SIZE = 2000;

/**
 * Runs `step` in batches until a batch comes back short; returns the total. A step over several
 * tables takes `batchSize` from each, so a short total means every table came back short.
 */
async function inBatches(
  step: (input: { batchSize: number }) => Promise<number>,
  batchSize = BATCH_SIZE,
) {
  let total = 0;
  for (;;) {
    const done = await step({ batchSize });
    total += done;
    if (done < batchSize) return total;
  }
}

/** Retention batches until none comes back full; returns the rows done. */
async function dropPersonalDataInBatches(): Promise<number> {
  let total = 0;
  for (;;) {
    const { dropped, more } = await dropExpiredPersonalData({
      campaignBatchSize: CAMPAIGN_BATCH_SIZE,
      rowBatchSize: RETENTION_ROW_BATCH_SIZE,
    });
    total += dropped;
    if (!more) return total;
  }
}

/**
 * Daily housekeeping, in bounded batches: closes orphan campaigns without sending them (before the
 * idempotency records that identify them are purged), drops idempotency records past their
 * retention, fails and refunds OTP requests whose code expired before it could be submitted, and
 * deletes OAuth client registrations that never completed consent within 30 days, webhook events (and
 * their attempts) dispatched over 30 days ago, throughput slots idle for a day, submission leases a
 * day past their end, and OAuth authorization requests, codes and tokens a day past their expiry
 * with the registration attempts and failed sign-ins of over a day ago (and, in the same step,
 * console sessions a day past their end); last, retention drops the personal data of campaigns and
 * OTP requests older than RETENTION_DAYS (activities/maintenance.ts).
 */
export async function maintenanceWorkflow(): Promise<MaintenanceResult> {
  const orphanCampaignsClosed = patched(CLOSE_ORPHAN_CAMPAIGNS)
    ? await inBatches(closeOrphanCampaigns, CAMPAIGN_BATCH_SIZE)
    : undefined;
  const idempotencyKeysPurged = await inBatches(purgeExpiredIdempotencyKeys);
  const unsentOtpRequestsFailed = await inBatches(failUnsentOtpRequests);
  const abandonedOAuthClientsDeleted = await inBatches(deleteAbandonedOAuthClients);
  const webhookEventsDeleted = await inBatches(deleteOldWebhookEvents);
  const idleSendSlotsDeleted = await deleteIdleSendSlots();
  const staleSubmissionLeasesDeleted = patched(DELETE_STALE_SUBMISSION_LEASES)
    ? await inBatches(deleteStaleSubmissionLeases)
    : undefined;
  const expiredOAuthRecordsPurged = patched(PURGE_EXPIRED_OAUTH_RECORDS)
    ? await inBatches(purgeExpiredOAuthRecords)
    : undefined;
  const personalDataDropped = patched(DROP_EXPIRED_PERSONAL_DATA)
    ? await dropPersonalDataInBatches()
    : undefined;
  setRunStatus('completed');
  return {
    ...(orphanCampaignsClosed !== undefined && { orphanCampaignsClosed }),
    idempotencyKeysPurged,
    unsentOtpRequestsFailed,
    abandonedOAuthClientsDeleted,
    webhookEventsDeleted,
    idleSendSlotsDeleted,
    ...(staleSubmissionLeasesDeleted !== undefined && { staleSubmissionLeasesDeleted }),
    ...(expiredOAuthRecordsPurged !== undefined && { expiredOAuthRecordsPurged }),
    ...(personalDataDropped !== undefined && { personalDataDropped }),
  };
}
