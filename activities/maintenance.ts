import type { Sql } from '../db/client.js';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.js';

export function createMaintenanceActivities(deps: { sql: Sql }) {
  return {
    async purgeExpiredIdempotencyKeys(input: { batchSize: number }): Promise<number> {
      return deleteExpiredIdempotencyKeys(deps.sql, input.batchSize);
    },
  };
}
