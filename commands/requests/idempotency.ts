import { createHash } from 'node:crypto';
import type { TransactionSql } from '../../db/client.js';
import {
  attachIdempotentResource,
  claimIdempotencyKey,
  completeIdempotencyKey,
  forgetIdempotencyKey,
  type IdempotencyClaim,
  type IdempotencyScope,
  type KeyState,
  readIdempotencyKey,
  releaseIdempotencyKey,
  renewIdempotencyLease,
} from '../../db/idempotency.js';
import { HeraldError, validationError } from '../../domain/errors.js';
import type { CommandDeps } from '../deps.js';

/**
 * The lease on a key follows the request holding it: short, and renewed while the request
 * works, so a key whose api died is free again within `seconds`, while a live request, however
 * long its work, keeps it. A renewal every 1.5 s survives two lost renewals in a row.
 */
export interface IdempotencyLease {
  seconds: number;
  renewEveryMs: number;
}

export const IDEMPOTENCY_LEASE: IdempotencyLease = { seconds: 5, renewEveryMs: 1500 };

/** Serialises with sorted keys, so the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(body: unknown): Buffer {
  return createHash('sha256').update(canonical(body)).digest();
}

/** A send endpoint's answer: the JSON text exactly as stored, so a replay is byte-identical. */
export interface IdempotentResponse {
  status: number;
  body: string;
  replayed: boolean;
}

export interface IdempotentWork {
  /** Set when an earlier attempt with this key already created the resource. */
  resourceId: string | null;
  /**
   * Ties the resource to the key before anything irreversible happens; given the transaction
   * that creates the resource, both are saved or neither is. Throws when this request no longer
   * holds the key (another took it over), which rolls that transaction back.
   */
  attach(resourceId: string, tx?: TransactionSql): Promise<void>;
}

/** This request's claim was taken over by another request: it may not write under the key. */
class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/** Renews the claim's lease every `renewEveryMs` until stopped or taken over. */
function keepLease(
  deps: Pick<CommandDeps, 'sql'>,
  claim: IdempotencyClaim,
  lease: IdempotencyLease,
) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      renewIdempotencyLease(deps.sql, claim, lease.seconds)
        .then(
          (stillHeld) => {
            if (!stillHeld) stopped = true;
          },
          // Postgres away: the lease may run out; the fenced writes below find out if it did.
          () => {},
        )
        .finally(() => {
          if (!stopped) schedule();
        });
    }, lease.renewEveryMs);
    timer.unref();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Runs a send under its Idempotency-Key (docs/contracts.md): claims the key, replays a finished answer,
 * and stores this answer when it is final. A non-final answer (`paused`, `pending`) releases the
 * key so that a retry continues the same resource. `work` checks anything that can change
 * between retries (providers, services) only when it creates the resource, so a retry of a
 * finished or started send never fails on a setting edited since.
 *
 * The claim is held by a lease this request renews while it works (README, "Idempotency-Key
 * lease"). A request that lost its claim to another (it stalled past its lease) writes nothing
 * under the key and answers what the key says now: the new holder's stored answer, or 409.
 */
export async function idempotently(
  deps: Pick<CommandDeps, 'sql' | 'env'>,
  scope: IdempotencyScope | null,
  rawBody: unknown,
  work: (context: IdempotentWork) => Promise<{ status: number; body: string; final: boolean }>,
  lease: IdempotencyLease = IDEMPOTENCY_LEASE,
): Promise<IdempotentResponse> {
  if (!scope) {
    const { status, body } = await work({ resourceId: null, attach: async () => {} });
    return { status, body, replayed: false };
  }
  const hash = requestHash(rawBody);
  const claimed = await claimIdempotencyKey(deps.sql, scope, {
    requestHash: hash,
    leaseSeconds: lease.seconds,
    ttlHours: deps.env.IDEMPOTENCY_KEY_TTL_HOURS,
  });
  if (claimed.state !== 'claimed') return answerOfKey(claimed);

  const { claim } = claimed;
  const renewal = keepLease(deps, claim, lease);
  let attached = claimed.resourceId !== null;
  let answer: Awaited<ReturnType<typeof work>>;
  try {
    answer = await work({
      resourceId: claimed.resourceId,
      attach: async (resourceId, tx) => {
        if (!(await attachIdempotentResource(tx ?? deps.sql, claim, resourceId)))
          throw new LeaseLostError();
        attached = true;
      },
    });
  } catch (error) {
    renewal.stop();
    // Refused before anything was created (say, a provider found invalid): the key is not spent.
    const settle = attached ? releaseIdempotencyKey : forgetIdempotencyKey;
    const settled = await settle(deps.sql, claim).catch(() => true);
    if (error instanceof LeaseLostError || !settled)
      return answerOfKey(await readIdempotencyKey(deps.sql, scope, hash));
    throw error;
  }
  renewal.stop();
  const settled = answer.final
    ? await completeIdempotencyKey(deps.sql, claim, answer)
    : await releaseIdempotencyKey(deps.sql, claim);
  if (!settled) return answerOfKey(await readIdempotencyKey(deps.sql, scope, hash));
  return { status: answer.status, body: answer.body, replayed: false };
}

/** The answer for a key this request does not hold (docs/contracts.md, "Idempotency-Key"). */
function answerOfKey(key: KeyState): IdempotentResponse {
  switch (key.state) {
    case 'completed':
      return { status: key.status, body: key.body, replayed: true };
    case 'mismatch':
      throw validationError({
        'Idempotency-Key': ['This Idempotency-Key was already used with a different request body.'],
      });
    case 'in_progress':
      throw new HeraldError('idempotency_in_progress', {
        headers: { 'retry-after': String(key.retryAfterSeconds) },
      });
    case 'absent':
      // Its holder dropped it (its request was refused): a retry claims it afresh.
      throw new HeraldError('idempotency_in_progress', { headers: { 'retry-after': '1' } });
  }
}
