import { heartbeat } from '@temporalio/activity';
import type { Sql } from '../db/client.js';
import { deleteEndedConsoleSessions } from '../db/console-sessions.js';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.js';
import { deleteAbandonedClients, deleteOldRegistrationAttempts } from '../db/oauth-clients.js';
import { deleteExpiredGrants } from '../db/oauth-grants.js';
import { closeOrphanCampaigns } from '../db/orphan-campaigns.js';
import { failUnsentExpiredOtpRequests, finishRunlessOtpRequests } from '../db/otp-requests.js';
import {
  deleteOldVerificationFailures,
  dropCampaignPersonalData,
  dropInboundPersonalData,
  dropOtpPersonalData,
  maskOldWebhookEventRecipients,
} from '../db/retention.js';
import { deleteIdleSendSlots } from '../db/send-slots.js';
import { deleteOldSignInFailures } from '../db/sign-in-failures.js';
import { deleteStaleLeases } from '../db/submission-leases.js';
import { deleteOldWriteMarks } from '../db/submission-writes.js';
import { deleteOldWebhookEvents } from '../db/webhooks.js';

/** docs/spec.md §5.2 item 7: a registration whose consent never completed expires after 30 days. */
const ABANDONED_REGISTRATION_DAYS = 30;
/** Well past the three-day retry schedule, so a delivery still running always finds its event. */
const WEBHOOK_EVENT_RETENTION_DAYS = 30;
/**
 * OAuth records go a day after they expired, and the limits' records (registration attempts,
 * failed sign-ins) a day after they were made: far past their windows (a minute, 15 minutes).
 */
const OAUTH_RECORD_RETENTION_SECONDS = 24 * 60 * 60;

export interface PersonalDataBatch {
  /** Campaigns per call: each carries up to 1,000 message rows. */
  campaignBatchSize: number;
  /** OTP requests, failed verifications and webhook events per call, each. */
  rowBatchSize: number;
}

export function createMaintenanceActivities(deps: {
  sql: Sql;
  /** RETENTION_DAYS: personal data older than this goes; 0 or unset keeps it. */
  retentionDays?: number;
}) {
  return {
    async purgeExpiredIdempotencyKeys(input: { batchSize: number }): Promise<number> {
      return deleteExpiredIdempotencyKeys(deps.sql, input.batchSize);
    },

    /** Orphans of an api crash and campaigns that lapsed undispatched (db/orphan-campaigns.ts). */
    async closeOrphanCampaigns(input: { batchSize: number }): Promise<number> {
      return closeOrphanCampaigns(deps.sql, input.batchSize);
    },

    /** The leases, and the write marks of SMPP claims (db/submission-writes.ts), a day old. */
    async deleteStaleSubmissionLeases(input: { batchSize: number }): Promise<number> {
      return (
        (await deleteStaleLeases(deps.sql, input.batchSize)) +
        (await deleteOldWriteMarks(deps.sql, input.batchSize))
      );
    },

    /** Expired requests never submitted, and those submitted beside a run that never came. */
    async failUnsentOtpRequests(input: { batchSize: number }): Promise<number> {
      return (
        (await failUnsentExpiredOtpRequests(deps.sql, input.batchSize)) +
        (await finishRunlessOtpRequests(deps.sql, input.batchSize))
      );
    },

    async deleteAbandonedOAuthClients(input: { batchSize: number }): Promise<number> {
      return deleteAbandonedClients(deps.sql, ABANDONED_REGISTRATION_DAYS, input.batchSize);
    },

    /**
     * Authorization requests, codes, tokens, registration attempts and failed sign-ins, and the
     * console's sessions a day after they ended (revoked or expired). The sessions ride along in
     * this step rather than a step of their own, so the workflow's commands stay as they were.
     */
    async purgeExpiredOAuthRecords(input: { batchSize: number }): Promise<number> {
      const after = OAUTH_RECORD_RETENTION_SECONDS;
      return (
        (await deleteExpiredGrants(deps.sql, after, input.batchSize)) +
        (await deleteOldRegistrationAttempts(deps.sql, after, input.batchSize)) +
        (await deleteOldSignInFailures(deps.sql, after, input.batchSize)) +
        (await deleteEndedConsoleSessions(deps.sql, input.batchSize))
      );
    },

    async deleteOldWebhookEvents(input: { batchSize: number }): Promise<number> {
      return deleteOldWebhookEvents(deps.sql, WEBHOOK_EVENT_RETENTION_DAYS, input.batchSize);
    },

    /**
     * One bounded batch of retention (db/retention.ts), heartbeating between its tables; `more`
     * when a table came back full, so the workflow calls again.
     */
    async dropExpiredPersonalData(
      input: PersonalDataBatch,
    ): Promise<{ dropped: number; more: boolean }> {
      const days = deps.retentionDays ?? 0;
      if (days === 0) return { dropped: 0, more: false };
      const campaigns = await dropCampaignPersonalData(deps.sql, days, input.campaignBatchSize);
      heartbeat();
      const steps = [
        dropOtpPersonalData,
        deleteOldVerificationFailures,
        maskOldWebhookEventRecipients,
        dropInboundPersonalData,
      ];
      let dropped = campaigns;
      let more = campaigns >= input.campaignBatchSize;
      for (const step of steps) {
        const done = await step(deps.sql, days, input.rowBatchSize);
        heartbeat();
        dropped += done;
        more ||= done >= input.rowBatchSize;
      }
      return { dropped, more };
    },

    async deleteIdleSendSlots(): Promise<number> {
      return deleteIdleSendSlots(deps.sql);
    },
  };
}
