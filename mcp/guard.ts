import { type AccessGrant, findAccessGrant, touchConnection } from '../db/oauth-grants.js';
import { findByKeyedHash } from '../security/tokens.js';
import type { OAuthDeps } from './oauth/deps.js';
import { MCP_SCOPE } from './oauth/metadata.js';

export type GuardResult =
  | { ok: true; grant: AccessGrant; token: string }
  | { ok: false; status: 401 | 403; wwwAuthenticate: string; body: Record<string, string> };

/** RFC 6750 §2.1 b64token; the scheme name is case-insensitive (RFC 9110 §11.1). */
const BEARER = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/i;
const TOUCH_INTERVAL_MS = 60_000;

/**
 * RFC 6750 / RFC 9728 resource guard for /mcp. The token is looked up in Postgres on every
 * call, so an expired or revoked token or connection is refused on the next request.
 */
export async function guardMcpRequest(
  deps: OAuthDeps,
  authorization: string | undefined,
): Promise<GuardResult> {
  const challenge = `Bearer resource_metadata="${deps.urls.resourceMetadata}", scope="${MCP_SCOPE}"`;
  const token = BEARER.exec(authorization ?? '')?.[1];
  if (!token) {
    return {
      ok: false,
      status: 401,
      wwwAuthenticate: challenge,
      body: { error: 'invalid_request', error_description: 'An OAuth access token is required.' },
    };
  }
  const grant = (
    await findByKeyedHash(deps.secret, 'oauth-token-hash', token, (hash) =>
      findAccessGrant(deps.sql, hash),
    )
  )?.row;
  if (!grant || grant.resource !== deps.urls.resource) {
    const description = 'The access token is invalid, expired or revoked.';
    return {
      ok: false,
      status: 401,
      wwwAuthenticate: `${challenge}, error="invalid_token", error_description="${description}"`,
      body: { error: 'invalid_token', error_description: description },
    };
  }
  if (!grant.scope.split(' ').includes(MCP_SCOPE)) {
    const description = `The access token lacks the ${MCP_SCOPE} scope.`;
    return {
      ok: false,
      status: 403,
      wwwAuthenticate: `Bearer error="insufficient_scope", scope="${MCP_SCOPE}", resource_metadata="${deps.urls.resourceMetadata}", error_description="${description}"`,
      body: { error: 'insufficient_scope', error_description: description },
    };
  }
  if (!grant.lastUsedAt || Date.now() - grant.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
    await touchConnection(deps.sql, grant.connectionId);
  }
  return { ok: true, grant, token };
}
