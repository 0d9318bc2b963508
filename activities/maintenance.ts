import type { Sql } from '../db/client.js';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.js';
import { failUnsentExpiredOtpRequests } from '../db/otp-requests.js';

export function createMaintenanceActivities(deps: { sql: Sql }) {
  return {
    async purgeExpiredIdempotencyKeys(input: { batchSize: number }): Promise<number> {
      return deleteExpiredIdempotencyKeys(deps.sql, input.batchSize);
    },

    async failUnsentOtpRequests(input: { batchSize: number }): Promise<number> {
      return failUnsentExpiredOtpRequests(deps.sql, input.batchSize);
    },
  };
}
