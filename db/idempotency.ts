import type { Sql } from './client.js';

export interface IdempotencyScope {
  workspaceId: number;
  endpoint: string;
  key: string;
}

export type ClaimResult =
  /** This request owns the key; `resourceId` is set when an earlier attempt already created it. */
  | { state: 'claimed'; resourceId: string | null }
  | { state: 'in_progress' }
  | { state: 'completed'; status: number; body: string }
  | { state: 'mismatch' };

/**
 * Claims a key atomically. A processing record whose lease ran out (its request died, or it
 * was released to allow a retry) is taken over; an expired record counts as absent.
 */
export async function claimIdempotencyKey(
  sql: Sql,
  scope: IdempotencyScope,
  input: { requestHash: Buffer; leaseSeconds: number; ttlHours: number },
): Promise<ClaimResult> {
  const [claimed] = await sql<{ resourceId: string | null }[]>`
    insert into idempotency_keys as k
      (workspace_id, endpoint, key, request_hash, status, locked_until, expires_at)
    values (${scope.workspaceId}, ${scope.endpoint}, ${scope.key}, ${input.requestHash}, 'processing',
            now() + make_interval(secs => ${input.leaseSeconds}),
            now() + make_interval(hours => ${input.ttlHours}))
    on conflict (workspace_id, endpoint, key) do update set
      request_hash = excluded.request_hash,
      status = 'processing',
      locked_until = excluded.locked_until,
      expires_at = excluded.expires_at,
      resource_id = case when k.expires_at < now() then null else k.resource_id end,
      response_status = null,
      response_body = null
    where k.expires_at < now()
       or (k.status = 'processing' and k.locked_until < now() and k.request_hash = excluded.request_hash)
    returning k.resource_id`;
  if (claimed) return { state: 'claimed', resourceId: claimed.resourceId };

  const [existing] = await sql<
    {
      requestHash: Buffer;
      status: string;
      responseStatus: number | null;
      responseBody: string | null;
    }[]
  >`
    select request_hash, status, response_status, response_body from idempotency_keys
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}`;
  if (!existing) return claimIdempotencyKey(sql, scope, input); // purged in between
  if (!existing.requestHash.equals(input.requestHash)) return { state: 'mismatch' };
  if (existing.status === 'completed') {
    return {
      state: 'completed',
      status: existing.responseStatus ?? 200,
      body: existing.responseBody ?? '',
    };
  }
  return { state: 'in_progress' };
}

export async function attachIdempotentResource(
  sql: Sql,
  scope: IdempotencyScope,
  resourceId: string,
) {
  await sql`
    update idempotency_keys set resource_id = ${resourceId}
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}`;
}

export async function completeIdempotencyKey(
  sql: Sql,
  scope: IdempotencyScope,
  response: { status: number; body: string },
) {
  await sql`
    update idempotency_keys
    set status = 'completed', response_status = ${response.status}, response_body = ${response.body}
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}`;
}

/** Ends this request's lease without a final answer, so a retry can take over at once. */
export async function releaseIdempotencyKey(sql: Sql, scope: IdempotencyScope) {
  await sql`
    update idempotency_keys set locked_until = now()
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}
      and status = 'processing'`;
}

/** Drops a claim that created nothing, so the key stays free for a corrected request. */
export async function forgetIdempotencyKey(sql: Sql, scope: IdempotencyScope) {
  await sql`
    delete from idempotency_keys
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}
      and status = 'processing' and resource_id is null`;
}

/** Deletes up to `limit` records whose retention has passed; returns how many went. */
export async function deleteExpiredIdempotencyKeys(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_keys
    where ctid in (select ctid from idempotency_keys where expires_at < now() limit ${limit})`;
  return result.count;
}
