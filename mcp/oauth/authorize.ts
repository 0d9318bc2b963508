import { findClient, type OAuthClient } from '../../db/oauth-clients.js';
import { LIFETIMES, type OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import type { Interaction } from './interaction.js';
import { MCP_SCOPE } from './metadata.js';
import { messagePage, signInPage } from './pages.js';
import { S256_CHALLENGE } from './pkce.js';
import { isLoopbackCallback, redirectUriProblem, sameCallback } from './redirect-uris.js';
import { canonicalResource } from './resource.js';
import { sealRequest } from './sealed-request.js';

export type AuthorizationQuery = Record<string, string | undefined>;

/**
 * RFC 6749 §A.5: state is printable ASCII. The cap is well above what clients send (a random
 * value, or a small encoded object) and keeps the callback URL short.
 */
const STATE = /^[\x20-\x7e]{0,1024}$/;
/** Longer than any client id or callback this server registers (registration.ts). */
const MAX_CLIENT_ID_LENGTH = 200;
const MAX_REDIRECT_URI_LENGTH = 2000;

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

/**
 * Validates the client and callback first: when either is wrong nothing may be sent to the
 * callback, so the error is JSON here.
 */
async function clientAndCallback(deps: OAuthDeps, query: AuthorizationQuery) {
  if (!query.client_id) throw new OAuthError('invalid_request', 'client_id is required.');
  const client =
    query.client_id.length <= MAX_CLIENT_ID_LENGTH
      ? await findClient(deps.sql, query.client_id)
      : undefined;
  if (!client) throw new OAuthError('invalid_client', 'client_id is not a registered client.');
  const redirectUri =
    query.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri) {
    throw new OAuthError(
      'invalid_request',
      'redirect_uri is required: the client registered several.',
    );
  }
  if (
    redirectUri.length > MAX_REDIRECT_URI_LENGTH ||
    !client.redirectUris.some((registered) => sameCallback(redirectUri, registered))
  ) {
    throw new OAuthError('invalid_request', 'redirect_uri is not registered for this client.');
  }
  const problem = redirectUriProblem(redirectUri, deps.redirectPolicy);
  if (problem) throw new OAuthError('invalid_request', problem);
  return { client, redirectUri };
}

/**
 * Whether an error may be sent to the callback without the user having seen it (RFC 9700
 * §4.11.2: an authorization server redirects automatically only to a callback it trusts).
 * Anyone may register any HTTPS callback through DCR, so only a callback the operator allowed
 * (MCP_REDIRECT_URIS) or a loopback one (RFC 8252 §7.3: the user's own machine) is trusted; for
 * any other the error is a page, and the server is no open redirector.
 */
function errorsMayRedirect(deps: OAuthDeps, redirectUri: string): boolean {
  return deps.redirectPolicy.allowlist.length > 0 || isLoopbackCallback(redirectUri);
}

/** Why the request's own parameters cannot be accepted, as an RFC 6749 §4.1.2.1 error. */
function requestProblem(
  deps: OAuthDeps,
  query: AuthorizationQuery,
): { error: string; description: string } | undefined {
  const problem = (error: string, description: string) => ({ error, description });
  if (query.state !== undefined && !STATE.test(query.state)) {
    return problem('invalid_request', 'state must be at most 1024 printable ASCII characters.');
  }
  if (query.response_type !== 'code') {
    return problem('unsupported_response_type', 'response_type must be code.');
  }
  if (!query.code_challenge)
    return problem('invalid_request', 'code_challenge is required (PKCE).');
  if (query.code_challenge_method !== 'S256') {
    return problem('invalid_request', 'code_challenge_method must be S256.');
  }
  if (!S256_CHALLENGE.test(query.code_challenge)) {
    return problem(
      'invalid_request',
      'code_challenge must be a base64url SHA-256 (43 characters).',
    );
  }
  // No scope asked means mcp:use; a scope without it asks for nothing this server grants.
  if (query.scope !== undefined && !query.scope.split(' ').includes(MCP_SCOPE)) {
    return problem('invalid_scope', `scope must include ${MCP_SCOPE}.`);
  }
  // RFC 8707: compared after RFC 3986 normalisation; the grant carries the canonical spelling.
  if (query.resource !== undefined && canonicalResource(query.resource) !== deps.urls.resource) {
    return problem('invalid_target', `resource must be ${deps.urls.resource}.`);
  }
  return undefined;
}

function refusal(
  deps: OAuthDeps,
  client: OAuthClient,
  redirectUri: string,
  query: AuthorizationQuery,
  { error, description }: { error: string; description: string },
): Interaction {
  if (errorsMayRedirect(deps, redirectUri)) {
    const state = query.state !== undefined && STATE.test(query.state) ? query.state : undefined;
    return {
      kind: 'redirect',
      location: callbackUrl(deps, redirectUri, { error, error_description: description, state }),
    };
  }
  return {
    kind: 'page',
    status: 400,
    html: messagePage(
      'Authorization failed',
      `${client.name} sent an authorization request that cannot be accepted: ${description} (${error}) Return to the client and try again.`,
    ),
  };
}

/**
 * GET /authorize: the authorization code flow with PKCE S256 only, bound to the MCP resource.
 * Stores nothing: the validated request is sealed into the sign-in form.
 */
export async function startAuthorization(
  deps: OAuthDeps,
  query: AuthorizationQuery,
): Promise<Interaction> {
  const { client, redirectUri } = await clientAndCallback(deps, query);
  const problem = requestProblem(deps, query);
  if (problem) return refusal(deps, client, redirectUri, query, problem);
  const request = sealRequest(
    deps.secret,
    {
      clientId: client.id,
      redirectUri,
      state: query.state ?? null,
      codeChallenge: query.code_challenge as string,
      scope: MCP_SCOPE,
      resource: deps.urls.resource,
    },
    LIFETIMES.authorizationRequest,
  );
  return {
    kind: 'page',
    status: 200,
    html: signInPage({ requestId: request, clientName: client.name }),
  };
}
