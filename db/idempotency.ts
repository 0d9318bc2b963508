import type { Sql, TransactionSql } from './client.js';

export interface IdempotencyScope {
  workspaceId: number;
  endpoint: string;
  key: string;
  /**
   * The user the key belongs to as well (OTP sends: a code is verified by its user only);
   * absent or null: the workspace's key (SMS sends, API keys without a user).
   */
  userId?: number | null;
}

/** The record's user_id column: 0 for a workspace's key (migration 0027). */
const userColumn = (scope: IdempotencyScope) => scope.userId ?? 0;

/**
 * A request's hold on a key. Every claim draws a fresh token, and every write a holder makes
 * afterwards (renew, attach, complete, release, forget) is conditional on it: once another
 * request has taken the key over, the old holder's writes change nothing.
 */
export interface IdempotencyClaim extends IdempotencyScope {
  token: string;
}

/** Where a key stands for a request with this body, when this request does not hold it. */
export type KeyState =
  | { state: 'in_progress'; retryAfterSeconds: number }
  | { state: 'completed'; status: number; body: string }
  | { state: 'mismatch' }
  | { state: 'absent' };

export type ClaimResult =
  /** This request owns the key; `resourceId` is set when an earlier attempt already created it. */
  | { state: 'claimed'; claim: IdempotencyClaim; resourceId: string | null }
  | Exclude<KeyState, { state: 'absent' }>;

/**
 * Claims a key atomically. A processing record whose lease ran out (its request died, or it
 * was released to allow a retry) is taken over; an expired record counts as absent.
 */
export async function claimIdempotencyKey(
  sql: Sql,
  scope: IdempotencyScope,
  input: { requestHash: Buffer; leaseSeconds: number; ttlHours: number },
): Promise<ClaimResult> {
  const [claimed] = await sql<{ resourceId: string | null; claimToken: string }[]>`
    insert into idempotency_keys as k
      (workspace_id, endpoint, key, user_id, request_hash, status, locked_until, expires_at,
       claim_token)
    values (${scope.workspaceId}, ${scope.endpoint}, ${scope.key}, ${userColumn(scope)},
            ${input.requestHash}, 'processing',
            now() + make_interval(secs => ${input.leaseSeconds}),
            now() + make_interval(hours => ${input.ttlHours}), gen_random_uuid())
    on conflict (workspace_id, endpoint, key, user_id) do update set
      request_hash = excluded.request_hash,
      status = 'processing',
      locked_until = excluded.locked_until,
      expires_at = excluded.expires_at,
      claim_token = excluded.claim_token,
      resource_id = case when k.expires_at < now() then null else k.resource_id end,
      response_status = null,
      response_body = null
    where k.expires_at < now()
       or (k.status = 'processing' and k.locked_until < now() and k.request_hash = excluded.request_hash)
    returning k.resource_id, k.claim_token`;
  if (claimed) {
    return {
      state: 'claimed',
      claim: { ...scope, token: claimed.claimToken },
      resourceId: claimed.resourceId,
    };
  }
  const existing = await readIdempotencyKey(sql, scope, input.requestHash);
  if (existing.state === 'absent') return claimIdempotencyKey(sql, scope, input); // purged in between
  return existing;
}

/**
 * The key as a request with this body finds it without claiming it. A processing record says
 * how long its holder's lease has left, rounded up to whole seconds and at least 1: a retry
 * sooner than that cannot take it over.
 */
export async function readIdempotencyKey(
  sql: Sql,
  scope: IdempotencyScope,
  requestHash: Buffer,
): Promise<KeyState> {
  const [existing] = await sql<
    {
      requestHash: Buffer;
      status: string;
      responseStatus: number | null;
      responseBody: string | null;
      leaseLeftSeconds: number;
    }[]
  >`
    select request_hash, status, response_status, response_body,
           greatest(1, ceil(extract(epoch from locked_until - now())))::int as lease_left_seconds
    from idempotency_keys
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}
      and user_id = ${userColumn(scope)} and expires_at >= now()`;
  if (!existing) return { state: 'absent' };
  if (!existing.requestHash.equals(requestHash)) return { state: 'mismatch' };
  if (existing.status === 'completed') {
    return {
      state: 'completed',
      status: existing.responseStatus ?? 200,
      body: existing.responseBody ?? '',
    };
  }
  return { state: 'in_progress', retryAfterSeconds: existing.leaseLeftSeconds };
}

const held = (sql: Sql | TransactionSql, claim: IdempotencyClaim) => sql`
  workspace_id = ${claim.workspaceId} and endpoint = ${claim.endpoint} and key = ${claim.key}
  and user_id = ${userColumn(claim)} and claim_token = ${claim.token} and status = 'processing'`;

/** Extends the holder's lease; false once another request has taken the key over. */
export async function renewIdempotencyLease(
  sql: Sql,
  claim: IdempotencyClaim,
  leaseSeconds: number,
): Promise<boolean> {
  const result = await sql`
    update idempotency_keys set locked_until = now() + make_interval(secs => ${leaseSeconds})
    where ${held(sql, claim)}`;
  return result.count === 1;
}

/**
 * Ties the resource to the key, in the caller's transaction when it creates the resource, so
 * that both are saved or neither is. False when this request no longer holds the key.
 */
export async function attachIdempotentResource(
  sql: Sql | TransactionSql,
  claim: IdempotencyClaim,
  resourceId: string,
): Promise<boolean> {
  const result = await sql`
    update idempotency_keys set resource_id = ${resourceId} where ${held(sql, claim)}`;
  return result.count === 1;
}

/** Stores the final answer; false (nothing stored) when this request no longer holds the key. */
export async function completeIdempotencyKey(
  sql: Sql,
  claim: IdempotencyClaim,
  response: { status: number; body: string },
): Promise<boolean> {
  const result = await sql`
    update idempotency_keys
    set status = 'completed', response_status = ${response.status}, response_body = ${response.body}
    where ${held(sql, claim)}`;
  return result.count === 1;
}

/**
 * Ends this request's lease without a final answer, so a retry can take over at once. The token
 * goes too, so a renewal still on its way cannot lock the key again.
 */
export async function releaseIdempotencyKey(sql: Sql, claim: IdempotencyClaim): Promise<boolean> {
  const result = await sql`
    update idempotency_keys set locked_until = now(), claim_token = null
    where ${held(sql, claim)}`;
  return result.count === 1;
}

/** Drops a claim that created nothing, so the key stays free for a corrected request. */
export async function forgetIdempotencyKey(sql: Sql, claim: IdempotencyClaim): Promise<boolean> {
  const result = await sql`
    delete from idempotency_keys where ${held(sql, claim)} and resource_id is null`;
  return result.count === 1;
}

/** Deletes up to `limit` records whose retention has passed; returns how many went. */
export async function deleteExpiredIdempotencyKeys(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_keys
    where ctid in (select ctid from idempotency_keys where expires_at < now() limit ${limit})`;
  return result.count;
}
