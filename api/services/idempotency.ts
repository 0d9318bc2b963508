import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import {
  attachIdempotentResource,
  claimIdempotencyKey,
  completeIdempotencyKey,
  forgetIdempotencyKey,
  type IdempotencyScope,
  releaseIdempotencyKey,
} from '../../db/idempotency.js';
import { HeraldError, validationError } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';

/** A request holding a key longer than this is presumed dead; a retry may take over. */
const LEASE_SECONDS = 30;

const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/** The Idempotency-Key header: up to 255 printable ASCII characters, or absent. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw validationError({
      'Idempotency-Key': [
        'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      ],
    });
  }
  return header;
}

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
  /** Ties the resource to the key before anything irreversible happens. */
  attach(resourceId: string): Promise<void>;
}

/**
 * Runs a send under its Idempotency-Key (DESIGN.md): claims the key, replays a finished answer,
 * and stores this answer when it is final. A non-final answer (`paused`, `pending`) releases the
 * key so that a retry continues the same resource. `work` checks anything that can change
 * between retries (providers, services) only when it creates the resource, so a retry of a
 * finished or started send never fails on a setting edited since.
 */
export async function idempotently(
  deps: Pick<ApiDeps, 'sql' | 'env'>,
  scope: IdempotencyScope | null,
  rawBody: unknown,
  work: (context: IdempotentWork) => Promise<{ status: number; body: string; final: boolean }>,
): Promise<IdempotentResponse> {
  if (!scope) {
    const { status, body } = await work({ resourceId: null, attach: async () => {} });
    return { status, body, replayed: false };
  }
  const claim = await claimIdempotencyKey(deps.sql, scope, {
    requestHash: requestHash(rawBody),
    leaseSeconds: LEASE_SECONDS,
    ttlHours: deps.env.IDEMPOTENCY_KEY_TTL_HOURS,
  });
  if (claim.state === 'mismatch') {
    throw validationError({
      'Idempotency-Key': ['This Idempotency-Key was already used with a different request body.'],
    });
  }
  if (claim.state === 'in_progress') {
    throw new HeraldError('idempotency_in_progress', { headers: { 'retry-after': '1' } });
  }
  if (claim.state === 'completed')
    return { status: claim.status, body: claim.body, replayed: true };

  let attached = claim.resourceId !== null;
  try {
    const answer = await work({
      resourceId: claim.resourceId,
      attach: async (resourceId) => {
        await attachIdempotentResource(deps.sql, scope, resourceId);
        attached = true;
      },
    });
    if (answer.final) await completeIdempotencyKey(deps.sql, scope, answer);
    else await releaseIdempotencyKey(deps.sql, scope);
    return { status: answer.status, body: answer.body, replayed: false };
  } catch (error) {
    // Refused before anything was created (say, a provider found invalid): the key is not spent.
    const settle = attached ? releaseIdempotencyKey : forgetIdempotencyKey;
    await settle(deps.sql, scope).catch(() => {});
    throw error;
  }
}

/**
 * Sends an idempotent answer. The stored JSON text goes out as is (fastify does not re-serialise
 * strings), so a replay is byte-identical to the first answer.
 */
export function replyIdempotently(reply: FastifyReply, response: IdempotentResponse) {
  if (response.replayed) reply.header('idempotent-replayed', 'true');
  return reply
    .code(response.status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(response.body as never);
}
