import type { Sql } from '../db/client.js';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.js';
import { deleteAbandonedClients } from '../db/oauth-clients.js';
import { closeOrphanCampaigns } from '../db/orphan-campaigns.js';
import { failUnsentExpiredOtpRequests } from '../db/otp-requests.js';
import { deleteStaleLeases } from '../db/submission-leases.js';
import { deleteOldWebhookEvents } from '../db/webhooks.js';
import { deleteIdleSendSlots } from './throughput.js';

/** SPEC §5.2 item 7: a registration whose consent never completed expires after 30 days. */
const ABANDONED_REGISTRATION_DAYS = 30;
/** Well past the three-day retry schedule, so a delivery still running always finds its event. */
const WEBHOOK_EVENT_RETENTION_DAYS = 30;

export function createMaintenanceActivities(deps: { sql: Sql }) {
  return {
    async purgeExpiredIdempotencyKeys(input: { batchSize: number }): Promise<number> {
      return deleteExpiredIdempotencyKeys(deps.sql, input.batchSize);
    },

    /** Orphans of an api crash and campaigns that lapsed undispatched (db/orphan-campaigns.ts). */
    async closeOrphanCampaigns(input: { batchSize: number }): Promise<number> {
      return closeOrphanCampaigns(deps.sql, input.batchSize);
    },

    async deleteStaleSubmissionLeases(input: { batchSize: number }): Promise<number> {
      return deleteStaleLeases(deps.sql, input.batchSize);
    },

    async failUnsentOtpRequests(input: { batchSize: number }): Promise<number> {
      return failUnsentExpiredOtpRequests(deps.sql, input.batchSize);
    },

    async deleteAbandonedOAuthClients(input: { batchSize: number }): Promise<number> {
      return deleteAbandonedClients(deps.sql, ABANDONED_REGISTRATION_DAYS, input.batchSize);
    },

    async deleteOldWebhookEvents(input: { batchSize: number }): Promise<number> {
      return deleteOldWebhookEvents(deps.sql, WEBHOOK_EVENT_RETENTION_DAYS, input.batchSize);
    },

    async deleteIdleSendSlots(): Promise<number> {
      return deleteIdleSendSlots(deps.sql);
    },
  };
}
