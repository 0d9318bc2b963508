import { findClient, type OAuthClient } from '../../db/oauth-clients.js';
import { insertAuthorization } from '../../db/oauth-grants.js';
import { LIFETIMES, type OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import { MCP_SCOPE } from './metadata.js';
import { S256_CHALLENGE } from './pkce.js';
import { redirectUriProblem, sameCallback } from './redirect-uris.js';

export type AuthorizationQuery = Record<string, string | undefined>;

/** The client's callback with `params` added, including `iss` (RFC 9207). */
export function callbackUrl(
  deps: OAuthDeps,
  redirectUri: string,
  params: Record<string, string | null | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) url.searchParams.set(name, value);
  }
  url.searchParams.set('iss', deps.urls.issuer);
  return url.toString();
}

/** Requested scopes this server knows; no scope asked means `mcp:use`. */
function grantedScope(requested: string | undefined): string {
  if (requested === undefined) return MCP_SCOPE;
  return requested.split(' ').includes(MCP_SCOPE) ? MCP_SCOPE : '';
}

/**
 * Validates the client and callback first: when either is wrong nothing may be sent to the
 * callback, so the error is JSON here. Later problems go back to the client's callback.
 */
async function clientAndCallback(deps: OAuthDeps, query: AuthorizationQuery) {
  if (!query.client_id) throw new OAuthError('invalid_request', 'client_id is required.');
  const client = await findClient(deps.sql, query.client_id);
  if (!client) throw new OAuthError('invalid_client', 'client_id is not a registered client.');
  const redirectUri =
    query.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri) {
    throw new OAuthError(
      'invalid_request',
      'redirect_uri is required: the client registered several.',
    );
  }
  if (!client.redirectUris.some((registered) => sameCallback(redirectUri, registered))) {
    throw new OAuthError('invalid_request', 'redirect_uri is not registered for this client.');
  }
  const problem = redirectUriProblem(redirectUri, deps.redirectPolicy);
  if (problem) throw new OAuthError('invalid_request', problem);
  return { client, redirectUri };
}

export type AuthorizationStart =
  | { kind: 'sign-in'; requestId: string; client: OAuthClient }
  | { kind: 'redirect'; location: string };

/** GET /authorize: the authorization code flow with PKCE S256 only, bound to the MCP resource. */
export async function startAuthorization(
  deps: OAuthDeps,
  query: AuthorizationQuery,
): Promise<AuthorizationStart> {
  const { client, redirectUri } = await clientAndCallback(deps, query);
  const refuse = (error: string, description: string): AuthorizationStart => ({
    kind: 'redirect',
    location: callbackUrl(deps, redirectUri, {
      error,
      error_description: description,
      state: query.state,
    }),
  });
  if (query.response_type !== 'code') {
    return refuse('unsupported_response_type', 'response_type must be code.');
  }
  if (!query.code_challenge) return refuse('invalid_request', 'code_challenge is required (PKCE).');
  if (query.code_challenge_method !== 'S256') {
    return refuse('invalid_request', 'code_challenge_method must be S256.');
  }
  if (!S256_CHALLENGE.test(query.code_challenge)) {
    return refuse('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters).');
  }
  const resource = query.resource ?? deps.urls.resource;
  if (resource !== deps.urls.resource) {
    return refuse('invalid_target', `resource must be ${deps.urls.resource}.`);
  }
  const requestId = await insertAuthorization(
    deps.sql,
    {
      clientId: client.id,
      redirectUri,
      state: query.state ?? null,
      codeChallenge: query.code_challenge,
      scope: grantedScope(query.scope),
      resource,
    },
    LIFETIMES.authorizationRequest,
  );
  return { kind: 'sign-in', requestId, client };
}
