import { createHmac, randomBytes } from 'node:crypto';
import { findMemberAccess } from '../../db/member-access.js';
import { findClient, type OAuthClient, upgradeClientSecretHash } from '../../db/oauth-clients.js';
import { revokeConnection } from '../../db/oauth-connections.js';
import {
  findRefreshToken,
  findTokenOwner,
  insertTokens,
  redeemCode,
  revokeFamily,
  revokeToken,
  rotateRefreshToken,
} from '../../db/oauth-grants.js';
import { secondFactorMissing } from '../../domain/access.js';
import { purposeKey } from '../../security/keys.js';
import { findByKeyedHash, keyedHash, matchesKeyedHash } from '../../security/tokens.js';
import { LIFETIMES, type OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import { verifierMatches } from './pkce.js';
import { canonicalResource } from './resource.js';

export type TokenForm = Record<string, string | undefined>;

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** Client authentication: `none` (client_id only) or `client_secret_post`, as registered. */
async function authenticateClient(deps: OAuthDeps, form: TokenForm): Promise<OAuthClient> {
  const client = form.client_id ? await findClient(deps.sql, form.client_id) : undefined;
  const unauthorized = new OAuthError('invalid_client', 'Client authentication failed.', 401);
  if (!client) throw unauthorized;
  if (client.tokenEndpointAuthMethod === 'client_secret_post') {
    const stored = client.secretHash;
    const purpose = 'oauth-client-secret-hash';
    if (
      !form.client_secret ||
      !stored ||
      !matchesKeyedHash(deps.secret, purpose, form.client_secret, stored)
    )
      throw unauthorized;
    const newest = keyedHash(deps.secret, purpose, form.client_secret);
    // Registered under an older key of the ring: re-hashed now, so that key can leave the ring.
    if (!newest.equals(stored)) await upgradeClientSecretHash(deps.sql, client.id, stored, newest);
  }
  return client;
}

async function issueTokens(
  deps: OAuthDeps,
  grant: { connectionId: number; family: string; resource: string; scope: string },
) {
  const access = `mcp_at_${randomBytes(32).toString('base64url')}`;
  const refresh = `mcp_rt_${randomBytes(32).toString('base64url')}`;
  await insertTokens(deps.sql, grant, [
    {
      hash: keyedHash(deps.secret, 'oauth-token-hash', access),
      kind: 'access',
      lifetimeSeconds: LIFETIMES.accessToken,
    },
    {
      hash: keyedHash(deps.secret, 'oauth-token-hash', refresh),
      kind: 'refresh',
      lifetimeSeconds: LIFETIMES.refreshToken,
    },
  ]);
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: LIFETIMES.accessToken,
    refresh_token: refresh,
    scope: grant.scope,
  };
}

async function exchangeCode(deps: OAuthDeps, client: OAuthClient, form: TokenForm) {
  if (!form.code) throw new OAuthError('invalid_request', 'code is required.');
  if (!form.code_verifier) throw new OAuthError('invalid_request', 'code_verifier is required.');
  const code = (
    await findByKeyedHash(deps.secret, 'oauth-code-hash', form.code, (hash) =>
      redeemCode(deps.sql, hash),
    )
  )?.row;
  if (!code) throw invalidGrant('The authorization code is invalid.');
  if (code.replayed) {
    // RFC 6749 §4.1.2: a code used twice revokes what the first use obtained.
    await revokeFamily(deps.sql, code.family);
    throw invalidGrant('The authorization code has already been used.');
  }
  if (code.expired) throw invalidGrant('The authorization code has expired.');
  if (code.clientId !== client.id)
    throw invalidGrant('The authorization code was issued to another client.');
  // RFC 6749 §4.1.3: identical to the authorization request's, which may have been another
  // loopback port or name than the one registered; the code is bound to the one used.
  if (form.redirect_uri !== code.redirectUri) {
    throw invalidGrant('redirect_uri does not match the authorization request.');
  }
  if (!verifierMatches(form.code_verifier, code.codeChallenge)) {
    throw invalidGrant('code_verifier does not match the code_challenge.');
  }
  if (form.resource !== undefined && canonicalResource(form.resource) !== code.resource) {
    throw new OAuthError('invalid_target', `resource must be ${code.resource}.`);
  }
  if (code.connectionRevoked) throw invalidGrant('The connection has been revoked.');
  return issueTokens(deps, code);
}

/**
 * The pair a refresh token is exchanged for, derived from it: a retry of the same refresh within
 * the grace window (a lost response, two tabs) gets the very same pair, never a second live one.
 */
function successorPair(deps: OAuthDeps, refreshToken: string) {
  const derive = (kind: string) =>
    createHmac('sha256', purposeKey(deps.secret, 'oauth-refresh-successor'))
      .update(`${kind}:${refreshToken}`)
      .digest('base64url');
  return { access: `mcp_at_${derive('access')}`, refresh: `mcp_rt_${derive('refresh')}` };
}

const REFRESH_REVOKED = 'The refresh token has expired or been revoked.';
const REFRESH_REPLAYED = 'The refresh token was already used; the connection has been revoked.';

async function refresh(deps: OAuthDeps, client: OAuthClient, form: TokenForm) {
  if (!form.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required.');
  // Everything is checked before anything changes: another client presenting the token, a
  // revoked one, the wrong resource or a departed member leave the connection as it was.
  const found = await findByKeyedHash(deps.secret, 'oauth-token-hash', form.refresh_token, (hash) =>
    findRefreshToken(deps.sql, hash),
  );
  const token = found?.row;
  if (!found || !token || token.clientId !== client.id) {
    throw invalidGrant('The refresh token is invalid.');
  }
  if (!token.usable) throw invalidGrant(REFRESH_REVOKED);
  if (form.resource !== undefined && canonicalResource(form.resource) !== token.resource) {
    throw new OAuthError('invalid_target', `resource must be ${token.resource}.`);
  }
  const replayed = async () => {
    // A refresh token replayed after its grace window was probably stolen: end the connection.
    await revokeConnection(deps.sql, token.connectionId);
    return invalidGrant(REFRESH_REPLAYED);
  };
  if (
    token.secondsSinceRotation !== null &&
    token.secondsSinceRotation > LIFETIMES.refreshReuseGrace
  ) {
    throw await replayed();
  }
  const access = await findMemberAccess(deps.sql, token.workspaceId, token.userId);
  if (access?.status !== 'active') {
    throw invalidGrant('The user is no longer an active member of the workspace.');
  }
  if (secondFactorMissing(access)) {
    throw invalidGrant(
      'The workspace requires two-step verification, which the user has not set up.',
    );
  }
  const pair = successorPair(deps, form.refresh_token);
  const rotation = await rotateRefreshToken(
    deps.sql,
    found.storedHash,
    [
      {
        hash: keyedHash(deps.secret, 'oauth-token-hash', pair.access),
        kind: 'access',
        lifetimeSeconds: LIFETIMES.accessToken,
      },
      {
        hash: keyedHash(deps.secret, 'oauth-token-hash', pair.refresh),
        kind: 'refresh',
        lifetimeSeconds: LIFETIMES.refreshToken,
      },
    ],
    LIFETIMES.refreshReuseGrace,
  );
  if (rotation.outcome === 'unusable') throw invalidGrant(REFRESH_REVOKED);
  if (rotation.outcome === 'replayed') throw await replayed();
  return {
    access_token: pair.access,
    token_type: 'Bearer',
    expires_in: rotation.accessExpiresInSeconds,
    refresh_token: pair.refresh,
    scope: token.scope,
  };
}

/** POST /token (RFC 6749 §4.1.3 and §6). */
export async function tokenEndpoint(deps: OAuthDeps, form: TokenForm) {
  const client = await authenticateClient(deps, form);
  switch (form.grant_type) {
    case 'authorization_code':
      return exchangeCode(deps, client, form);
    case 'refresh_token':
      return refresh(deps, client, form);
    case undefined:
      throw new OAuthError('invalid_request', 'grant_type is required.');
    default:
      throw new OAuthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token.',
      );
  }
}

/** POST /revoke (RFC 7009): unknown tokens and other clients' tokens are answered alike. */
export async function revocationEndpoint(deps: OAuthDeps, form: TokenForm): Promise<void> {
  const client = await authenticateClient(deps, form);
  if (!form.token) throw new OAuthError('invalid_request', 'token is required.');
  const found = await findByKeyedHash(deps.secret, 'oauth-token-hash', form.token, (hash) =>
    findTokenOwner(deps.sql, hash),
  );
  if (!found || found.row.clientId !== client.id) return;
  const { row: owner, storedHash: hash } = found;
  // Revoking a refresh token ends the access tokens of the same grant too (§2.1).
  if (owner.kind === 'refresh') await revokeFamily(deps.sql, owner.family);
  else await revokeToken(deps.sql, hash);
}
