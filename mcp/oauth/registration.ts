import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  admitRegistration,
  insertClientWithinCaps,
  type UnconsentedCaps,
} from '../../db/oauth-clients.js';
import { keyedHash } from '../../security/tokens.js';
import type { OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import {
  isAllowlisted,
  malformedRedirectUri,
  notAllowlisted,
  type RedirectPolicy,
  redirectUriProblem,
} from './redirect-uris.js';

/** docs/spec.md §8: 10 registrations per minute from one address. */
export const REGISTRATIONS_PER_WINDOW = 10;
const WINDOW_SECONDS = 60;

/**
 * Registrations that never completed consent are kept 30 days (docs/spec.md §5.2); past these counts the
 * oldest of them go first. A client registers before anyone signs in, so no workspace is known:
 * the installation's one authorization server has the cap docs/spec.md's per-workspace one (§8) would.
 * With STORED_METADATA_LIMIT, one address holds at most 400 KiB, the installation 40 MiB.
 */
export const UNCONSENTED_CAPS: UnconsentedCaps = { perAddress: 100, total: 10_000 };

/** Bytes (UTF-8 JSON) of what one registration stores: its name, callbacks and metadata. */
export const STORED_METADATA_LIMIT = 4096;

/**
 * Text of a metadata member: capped, one line, no control characters, and no format characters
 * (Unicode Cf: bidi overrides and isolates, zero-width spaces and joiners, …), which would let a
 * consent page show a name that reads as another client's. Refused rather than stripped: the
 * client learns at once, and what Herald shows and echoes is exactly what the client sent.
 */
const text = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^\P{Cc}*$/u, 'must not contain control characters')
    .regex(
      /^\P{Cf}*$/u,
      'must not contain format characters such as bidi controls or zero-width spaces (Unicode Cf)',
    );
const uri = text(512);

/**
 * RFC 7591 §2 client metadata, each member capped at a few times what clients send (Claude and
 * ChatGPT one callback, Cursor three, VS Code four, each under 100 characters; names under 30).
 * Members this server does not use are ignored, as §2 requires: neither stored nor echoed.
 */
const clientMetadata = z.object({
  redirect_uris: z.array(uri).min(1).max(5),
  client_name: text(100).trim().min(1).optional(),
  client_uri: uri.optional(),
  logo_uri: uri.optional(),
  tos_uri: uri.optional(),
  policy_uri: uri.optional(),
  contacts: z.array(text(254)).max(3).optional(),
  software_id: text(100).optional(),
  software_version: text(50).optional(),
  token_endpoint_auth_method: z.enum(['none', 'client_secret_post']).default('none'),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token']))
    .max(2)
    .default(['authorization_code', 'refresh_token']),
  response_types: z.array(z.literal('code')).max(1).default(['code']),
  scope: text(200).optional(),
});

/** The registration request's body: its members are capped above, this caps the whole. */
export const REGISTRATION_BODY_LIMIT = 64 * 1024;

function metadataProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue?.path.join('.') || 'body';
  if (field === 'token_endpoint_auth_method') {
    return 'token_endpoint_auth_method must be none or client_secret_post.';
  }
  return `${field}: ${issue?.message ?? 'invalid'}`;
}

/**
 * The callbacks a registration keeps. A malformed one, or one the open policy refuses, refuses
 * the registration. Off the operator's allowlist, a callback is dropped instead (RFC 7591 §3.2.1:
 * the server may replace requested metadata) and named in `dropped_redirect_uris`: Cursor
 * registers three callbacks and VS Code four, and an allowlist naming the one in use must not
 * refuse them all. Only when none is allowed is the registration refused, naming each.
 */
function allowedCallbacks(policy: RedirectPolicy, requested: string[]) {
  for (const uri of requested) {
    const problem =
      policy.allowlist.length > 0 ? malformedRedirectUri(uri) : redirectUriProblem(uri, policy);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const kept = requested.filter(
    (uri) => policy.allowlist.length === 0 || isAllowlisted(uri, policy),
  );
  const dropped = requested.filter((uri) => !kept.includes(uri));
  if (kept.length === 0) {
    throw new OAuthError('invalid_redirect_uri', dropped.map(notAllowlisted).join(' '));
  }
  return { kept, dropped };
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
  const { kept, dropped } = allowedCallbacks(deps.redirectPolicy, parsed.data.redirect_uris);
  const metadata = { ...parsed.data, redirect_uris: kept };
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
  const stored = {
    name: client_name ?? 'Unnamed MCP client',
    redirectUris: redirect_uris,
    metadata: { ...rest, grant_types, response_types },
  };
  const size = Buffer.byteLength(JSON.stringify(stored));
  if (size > STORED_METADATA_LIMIT) {
    throw new OAuthError(
      'invalid_client_metadata',
      `The registration's metadata takes ${size} bytes; at most ${STORED_METADATA_LIMIT} are stored per client.`,
    );
  }
  const client = await deps.sql.begin((tx) =>
    insertClientWithinCaps(
      tx,
      {
        id: clientId,
        ...stored,
        tokenEndpointAuthMethod: token_endpoint_auth_method,
        secretHash:
          secret === undefined ? null : keyedHash(deps.secret, 'oauth-client-secret-hash', secret),
        registeredFrom: ip,
      },
      UNCONSENTED_CAPS,
    ),
  );
  return {
    ...rest,
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    ...(dropped.length === 0 ? {} : { dropped_redirect_uris: dropped }),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    grant_types,
    response_types,
  };
}
