import type { Sql } from './client.js';

/** Deletes up to `limit` records whose retention has passed; returns how many went. */
export async function deleteExpiredIdempotencyKeys(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_keys
    where ctid in (select ctid from idempotency_keys where expires_at < now() limit ${limit})`;
  return result.count;
}
