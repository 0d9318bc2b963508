import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { admitRegistration, insertClient } from '../../db/oauth-clients.js';
import { keyedHash } from '../../security/tokens.js';
import type { OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import { redirectUriProblem } from './redirect-uris.js';

/** SPEC §8: 10 registrations per minute from one address. */
export const REGISTRATIONS_PER_WINDOW = 10;
const WINDOW_SECONDS = 60;

/** RFC 7591 §2 client metadata; unknown members are kept and echoed, as §3.2.1 allows. */
const clientMetadata = z.looseObject({
  redirect_uris: z.array(z.string()).min(1).max(10),
  client_name: z.string().trim().min(1).max(200).optional(),
  token_endpoint_auth_method: z.enum(['none', 'client_secret_post']).default('none'),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token']))
    .default(['authorization_code', 'refresh_token']),
  response_types: z.array(z.literal('code')).default(['code']),
  scope: z.string().optional(),
});

function metadataProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue?.path.join('.') || 'body';
  if (field === 'token_endpoint_auth_method') {
    return 'token_endpoint_auth_method must be none or client_secret_post.';
  }
  return `${field}: ${issue?.message ?? 'invalid'}`;
}

/** Dynamic Client Registration (RFC 7591): returns the 201 body. */
export async function registerClient(deps: OAuthDeps, ip: string, body: unknown) {
  const admission = await admitRegistration(deps.sql, ip, REGISTRATIONS_PER_WINDOW, WINDOW_SECONDS);
  if (!admission.admitted) {
    throw new OAuthError(
      'too_many_requests',
      `Too many client registrations from this address. Retry after ${admission.retryAfterSeconds} seconds.`,
      429,
      { 'retry-after': String(admission.retryAfterSeconds) },
    );
  }
  const parsed = clientMetadata.safeParse(body);
  if (!parsed.success) {
    const onRedirects = parsed.error.issues[0]?.path[0] === 'redirect_uris';
    throw new OAuthError(
      onRedirects ? 'invalid_redirect_uri' : 'invalid_client_metadata',
      metadataProblem(parsed.error),
    );
  }
  const metadata = parsed.data;
  for (const uri of metadata.redirect_uris) {
    const problem = redirectUriProblem(uri, deps.redirectPolicy);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const clientId = `mcp_${randomBytes(16).toString('base64url')}`;
  const secret =
    metadata.token_endpoint_auth_method === 'client_secret_post'
      ? randomBytes(32).toString('base64url')
      : undefined;
  const {
    redirect_uris,
    client_name,
    token_endpoint_auth_method,
    grant_types,
    response_types,
    ...rest
  } = metadata;
  const client = await insertClient(deps.sql, {
    id: clientId,
    name: client_name ?? 'Unnamed MCP client',
    redirectUris: redirect_uris,
    tokenEndpointAuthMethod: token_endpoint_auth_method,
    secretHash:
      secret === undefined ? null : keyedHash(deps.secret, 'oauth-client-secret-hash', secret),
    metadata: { ...rest, grant_types, response_types },
    registeredFrom: ip,
  });
  return {
    ...rest,
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    grant_types,
    response_types,
  };
}
