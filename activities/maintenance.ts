import type { Sql } from '../db/client.js';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.js';
import { deleteAbandonedClients } from '../db/oauth-clients.js';
import { failUnsentExpiredOtpRequests } from '../db/otp-requests.js';

/** SPEC §5.2 item 7: a registration whose consent never completed expires after 30 days. */
const ABANDONED_REGISTRATION_DAYS = 30;

export function createMaintenanceActivities(deps: { sql: Sql }) {
  return {
    async purgeExpiredIdempotencyKeys(input: { batchSize: number }): Promise<number> {
      return deleteExpiredIdempotencyKeys(deps.sql, input.batchSize);
    },

    async failUnsentOtpRequests(input: { batchSize: number }): Promise<number> {
      return failUnsentExpiredOtpRequests(deps.sql, input.batchSize);
    },

    async deleteAbandonedOAuthClients(input: { batchSize: number }): Promise<number> {
      return deleteAbandonedClients(deps.sql, ABANDONED_REGISTRATION_DAYS, input.batchSize);
    },
  };
}
