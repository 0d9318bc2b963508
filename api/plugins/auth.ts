import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Actor } from '../../commands/actor.js';
import { takeApiRequest } from '../../commands/requests/api-rate.js';
import {
  type ActiveApiKey,
  type ApiKeyPrincipal,
  findActiveApiKey,
  touchApiKey,
  upgradeApiKeyHash,
} from '../../db/api-keys.js';
import type { Ability } from '../../domain/access.js';
import { HeraldError } from '../../domain/errors.js';
import { isWellFormedApiKeyToken, keyedHashCandidates } from '../../security/tokens.js';
import type { ApiDeps } from '../deps.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiKeyPrincipal | null;
  }
  interface FastifyContextConfig {
    /** The API key ability a route requires. */
    ability?: Ability;
  }
}

/** The auth scheme is case-insensitive (RFC 9110 §11.1), as /mcp reads it. */
const BEARER = /^Bearer ([^\s]+)$/i;
const TOUCH_INTERVAL_MS = 60_000;

/** Bearer API keys only: cookies are never read as credentials. */
async function authenticate(deps: ApiDeps, request: FastifyRequest): Promise<ActiveApiKey> {
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (!token || !isWellFormedApiKeyToken(token)) throw new HeraldError('unauthenticated');
  const candidates = keyedHashCandidates(deps.secret, 'api-key-hash', token);
  const found = await findActiveApiKey(deps.sql, candidates);
  if (!found) throw new HeraldError('unauthenticated');
  const { tokenHash, ...principal } = found;
  const [current] = candidates;
  if (!tokenHash.equals(current)) {
    // Stored under an older key of the ring (or before per-purpose keys): re-hash it under the
    // newest key now the token is known, so the old key can leave the ring (docs/operations.md "Secret rotation").
    upgradeApiKeyHash(deps.sql, principal.keyId, tokenHash, current).catch((error) =>
      request.log.warn({ err: error }, 'could not upgrade the API key hash'),
    );
  }
  if (!principal.lastUsedAt || Date.now() - principal.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
    touchApiKey(deps.sql, principal.keyId).catch((error) =>
      request.log.warn({ err: error }, 'could not record API key use'),
    );
  }
  return found;
}

export const apiKeyAuth = fp<{ deps: ApiDeps }>(async (app: FastifyInstance, { deps }) => {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const { tokenHash: _hash, rateLimit, ...principal } = await authenticate(deps, request);
    const rate = await takeApiRequest(deps.sql, {
      keyId: principal.keyId,
      workspaceId: principal.workspaceId,
      keyRate: rateLimit,
      settings: principal.guardSettings ?? null,
    });
    reply.headers(rate.headers);
    if (rate.refusal) throw rate.refusal;
    const ability = request.routeOptions.config.ability;
    if (ability && !principal.abilities.includes(ability)) {
      throw new HeraldError('forbidden', {
        message: `This API key does not have the "${ability}" ability.`,
      });
    }
    request.principal = principal;
  });
});

/** The key behind a request as the audit log names who acted: by its prefix, from its address. */
export function apiKeyActorOf(request: FastifyRequest): Actor {
  const { keyId, prefix } = principalOf(request);
  return { kind: 'api_key', keyId, prefix, address: request.ip || null };
}

/** The authenticated key of a route behind `apiKeyAuth`. */
export function principalOf(request: FastifyRequest): ApiKeyPrincipal {
  if (!request.principal) throw new HeraldError('unauthenticated');
  return request.principal;
}
