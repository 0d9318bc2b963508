/**
 * The MCP authorization server (docs/spec.md §4.5, §5.2, §5.3, §7, §8) driven by an independent OAuth
 * client library, oauth4webapi, over real HTTP: discovery, Dynamic Client Registration, the
 * authorization code flow with PKCE, refresh rotation, revocation, the /mcp resource guard and
 * the live permission checks of every tool call.
 */
import { randomInt } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectionsRevoke } from '../../cli/admin/mcp-admin.js';
import { userCreate } from '../../cli/admin/users.js';
import { removeMember, updateMember } from '../../db/members.js';
import { revokeConnection } from '../../db/oauth-connections.js';
import { updateWorkspace } from '../../db/workspaces.js';
import type { Permission } from '../../domain/access.js';
import {
  authorizeInForms,
  createMcpUser,
  type McpServerUnderTest,
  type McpUser,
  openMcpServer,
  setPermissions,
} from '../support/mcp.js';

const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
/** A native client's loopback callback; it is never served, the code is read from the redirect. */
const CALLBACK = 'http://127.0.0.1:9/callback';
const SCOPE = 'mcp:use';

type ClientMetadata = Partial<oauth.OmitSymbolProperties<oauth.Client>>;

/** One server under test and its metadata as the client library discovered it. */
interface Target {
  server: McpServerUnderTest;
  as: oauth.AuthorizationServer;
}

let main: Target;
/** Source address of this suite's registrations: its own rate-limit bucket (see below). */
let source: string;

// --- HTTP from a chosen loopback source address ----------------------------------------------

/**
 * The registration limit is per client address and every request of the run comes from
 * loopback. On Linux the whole 127.0.0.0/8 block is loopback, so this suite registers from an
 * address of its own and other test files running in parallel never share its bucket. Where
 * only 127.0.0.1 exists (macOS), it falls back to 127.0.0.1 and clears that bucket instead.
 */
function fetchFrom(localAddress: string) {
  return (url: string, init: oauth.CustomFetchOptions<string, unknown>): Promise<Response> =>
    new Promise((resolve, reject) => {
      const request = httpRequest(
        url,
        { method: init.method, headers: init.headers, localAddress },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const headers = new Headers();
            for (let index = 0; index < response.rawHeaders.length; index += 2) {
              headers.append(
                response.rawHeaders[index] as string,
                response.rawHeaders[index + 1] as string,
              );
            }
            const status = response.statusCode ?? 500;
            const body = Buffer.concat(chunks).toString('utf8');
            resolve(new Response(status === 204 ? null : body, { status, headers }));
          });
        },
      );
      request.on('error', reject);
      request.end(init.body === undefined || init.body === null ? undefined : String(init.body));
    });
}

async function pickSourceAddress(baseUrl: string): Promise<string> {
  const candidate = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  try {
    const response = await fetchFrom(candidate)(`${baseUrl}/health`, {
      method: 'GET',
      headers: {},
      body: undefined,
      redirect: 'manual',
    });
    return response.status === 200 ? candidate : '127.0.0.1';
  } catch {
    return '127.0.0.1';
  }
}

async function clearRegistrationAttempts(ip: string) {
  await main.server.sql`delete from oauth_registration_attempts where ip = ${ip}`;
}

// --- OAuth client steps ------------------------------------------------------------------------

async function discover(server: McpServerUnderTest): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.baseUrl);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE });
  return oauth.processDiscoveryResponse(issuer, response);
}

function registrationRequest(metadata: ClientMetadata, target = main, from = source) {
  return oauth.dynamicClientRegistrationRequest(target.as, metadata, {
    ...INSECURE,
    [oauth.customFetch]: fetchFrom(from),
  });
}

async function register(
  metadata: ClientMetadata = {},
  target = main,
  from = source,
): Promise<oauth.Client> {
  const response = await registrationRequest(
    { client_name: 'OAuth test client', redirect_uris: [CALLBACK], ...metadata },
    target,
    from,
  );
  return oauth.processDynamicClientRegistrationResponse(response);
}

async function pkce() {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/** The authorization URL a client builds; `null` leaves a parameter out. */
function authorizationUrl(
  target: Target,
  client: oauth.Client,
  params: Record<string, string | null> = {},
): URL {
  const url = new URL(target.as.authorization_endpoint as string);
  const all: Record<string, string | null> = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: (client.redirect_uris as string[])[0] as string,
    code_challenge_method: 'S256',
    scope: SCOPE,
    resource: target.server.resource,
    ...params,
  };
  for (const [name, value] of Object.entries(all)) {
    if (value !== null) url.searchParams.set(name, value);
  }
  return url;
}

interface Authorized {
  client: oauth.Client;
  verifier: string;
  state: string;
  callback: URL;
  params: URLSearchParams;
}

/** Registration (unless given a client), PKCE, the sign-in and consent forms, the callback. */
async function authorize(
  user: McpUser,
  options: {
    client?: oauth.Client;
    scope?: string;
    workspaceId?: number;
    redirectUri?: string;
    target?: Target;
  } = {},
): Promise<Authorized> {
  const target = options.target ?? main;
  const client = options.client ?? (await register({}, target));
  const { verifier, challenge } = await pkce();
  const state = oauth.generateRandomState();
  const url = authorizationUrl(target, client, {
    code_challenge: challenge,
    state,
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    ...(options.redirectUri === undefined ? {} : { redirect_uri: options.redirectUri }),
  });
  const callback = await authorizeInForms(url.href, user, { workspaceId: options.workspaceId });
  const params = oauth.validateAuthResponse(target.as, client, callback, state);
  return { client, verifier, state, callback, params };
}

function exchange(
  authorized: Authorized,
  options: {
    client?: oauth.Client;
    auth?: oauth.ClientAuth;
    verifier?: string | typeof oauth.nopkce;
    redirectUri?: string;
    resource?: string;
    target?: Target;
  } = {},
): Promise<oauth.TokenEndpointResponse> {
  const target = options.target ?? main;
  const client = options.client ?? authorized.client;
  return oauth
    .authorizationCodeGrantRequest(
      target.as,
      client,
      options.auth ?? oauth.None(),
      authorized.params,
      options.redirectUri ?? ((authorized.client.redirect_uris as string[])[0] as string),
      options.verifier ?? authorized.verifier,
      {
        ...INSECURE,
        ...(options.resource === undefined
          ? {}
          : { additionalParameters: { resource: options.resource } }),
      },
    )
    .then((response) => oauth.processAuthorizationCodeResponse(target.as, client, response));
}

async function refresh(
  client: oauth.Client,
  refreshToken: string,
  auth: oauth.ClientAuth = oauth.None(),
): Promise<oauth.TokenEndpointResponse> {
  const response = await oauth.refreshTokenGrantRequest(
    main.as,
    client,
    auth,
    refreshToken,
    INSECURE,
  );
  return oauth.processRefreshTokenResponse(main.as, client, response);
}

async function revoke(client: oauth.Client, token: string, auth: oauth.ClientAuth = oauth.None()) {
  const response = await oauth.revocationRequest(main.as, client, auth, token, INSECURE);
  return oauth.processRevocationResponse(response);
}

interface Connected extends Authorized {
  tokens: oauth.TokenEndpointResponse;
  connectionId: number;
}

async function connect(
  user: McpUser,
  options: Parameters<typeof authorize>[1] = {},
): Promise<Connected> {
  const authorized = await authorize(user, options);
  const tokens = await exchange(authorized, { target: options.target });
  const [connection] = await main.server.sql<{ id: number }[]>`
    select id from oauth_connections
    where client_id = ${authorized.client.client_id} and user_id = ${user.userId}
      and revoked_at is null`;
  return { ...authorized, tokens, connectionId: (connection as { id: number }).id };
}

/** The OAuth error response a step was refused with: status, body and headers. */
async function refusal(step: Promise<unknown>) {
  const error = await step.then(
    (value) => {
      throw new Error(`expected an OAuth error response, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
  if (!(error instanceof oauth.ResponseBodyError)) throw error;
  return { status: error.status, body: error.cause, headers: error.response.headers };
}

/** An authorization error sent back to the client's callback, as the library reports it. */
function callbackError(target: Target, client: oauth.Client, callback: URL, state: string) {
  try {
    oauth.validateAuthResponse(target.as, client, callback, state);
  } catch (error) {
    if (!(error instanceof oauth.AuthorizationResponseError)) throw error;
    return {
      error: error.error,
      error_description: error.error_description,
      state: error.cause.get('state'),
      iss: error.cause.get('iss'),
    };
  }
  throw new Error(`expected an error in ${callback}`);
}

// --- MCP over Streamable HTTP ------------------------------------------------------------------

type JsonRpc = { jsonrpc: '2.0'; id?: number; method: string; params?: Record<string, unknown> };

const TOOLS_LIST: JsonRpc = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

interface McpReply {
  response: Response;
  /** The WWW-Authenticate challenges as the client library parsed them. */
  challenges?: oauth.WWWAuthenticateChallenge[];
}

async function rpc(accessToken: string, message: JsonRpc, target = main): Promise<McpReply> {
  const headers = new Headers({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  });
  if (message.method !== 'initialize') headers.set('mcp-protocol-version', LATEST_PROTOCOL_VERSION);
  try {
    const response = await oauth.protectedResourceRequest(
      accessToken,
      'POST',
      new URL(target.server.resource),
      headers,
      JSON.stringify(message),
      INSECURE,
    );
    return { response };
  } catch (error) {
    if (!(error instanceof oauth.WWWAuthenticateChallengeError)) throw error;
    return { response: error.response, challenges: error.cause };
  }
}

/** initialize + notifications/initialized: each is its own request to the stateless server. */
async function initialize(accessToken: string) {
  const { response } = await rpc(accessToken, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'herald-oauth-test', version: '1.0.0' },
    },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('mcp-session-id')).toBeNull();
  const body = (await response.json()) as {
    result: { protocolVersion: string; serverInfo: { name: string } };
  };
  expect(body.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  expect(body.result.serverInfo.name).toBe('herald-reporting');
  const initialized = await rpc(accessToken, {
    jsonrpc: '2.0',
    method: 'notifications/initialized',
  });
  expect(initialized.response.status).toBe(202);
}

async function toolNames(accessToken: string): Promise<string[]> {
  const { response } = await rpc(accessToken, TOOLS_LIST);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result: { tools: { name: string }[] } };
  return body.result.tools.map((tool) => tool.name).sort();
}

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

async function callTool(
  accessToken: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolResult> {
  const { response } = await rpc(accessToken, {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result: ToolResult };
  return body.result;
}

/** What a tool refused with, or undefined when it answered. */
async function toolRefusal(accessToken: string, name: string, args: Record<string, unknown> = {}) {
  const result = await callTool(accessToken, name, args);
  return result.isError ? result.content[0]?.text : undefined;
}

const resourceMetadataUrl = () => `${main.server.baseUrl}/.well-known/oauth-protected-resource/mcp`;
const INVALID_TOKEN = 'The access token is invalid, expired or revoked.';

/** RFC 6750 §3.1 invalid_token, with the RFC 9728 pointer to the resource metadata. */
async function expectInvalidToken(accessToken: string) {
  const { response, challenges } = await rpc(accessToken, TOOLS_LIST);
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe(
    `Bearer resource_metadata="${resourceMetadataUrl()}", scope="${SCOPE}", error="invalid_token", error_description="${INVALID_TOKEN}"`,
  );
  expect(challenges?.[0]?.parameters.error).toBe('invalid_token');
  expect(await response.json()).toEqual({
    error: 'invalid_token',
    error_description: INVALID_TOKEN,
  });
}

const REFRESH_REVOKED = {
  error: 'invalid_grant',
  error_description: 'The refresh token has expired or been revoked.',
};

// --- Suite -------------------------------------------------------------------------------------

beforeAll(async () => {
  const server = await openMcpServer();
  main = { server, as: await discover(server) };
  source = await pickSourceAddress(server.baseUrl);
});

afterAll(async () => {
  await clearRegistrationAttempts(source);
  await main.server.close();
});

// Every test may register a few clients: each starts with an empty bucket for this suite.
beforeEach(() => clearRegistrationAttempts(source));

describe('discovery', () => {
  it('serves RFC 9728 protected resource metadata at both paths, naming {base}/mcp', async () => {
    const { baseUrl, resource } = main.server;
    const expected = {
      resource,
      resource_name: 'Herald reporting (read-only)',
      authorization_servers: [baseUrl],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ['header'],
    };
    const discovered = await oauth.processResourceDiscoveryResponse(
      new URL(resource),
      await oauth.resourceDiscoveryRequest(new URL(resource), INSECURE),
    );
    expect(discovered).toEqual(expected);
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const response = await fetch(`${baseUrl}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual(expected);
    }
  });

  it('serves RFC 8414 authorization server metadata: DCR, PKCE S256, public clients, no CIMD', async () => {
    const issuer = main.server.baseUrl;
    expect(main.as).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      scopes_supported: ['mcp:use'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: false,
    });
  });

  it('answers a request without a token with 401 and a challenge naming the resource metadata', async () => {
    const response = await fetch(main.server.resource, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(TOOLS_LIST),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${resourceMetadataUrl()}", scope="${SCOPE}"`,
    );
    expect(await response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'An OAuth access token is required.',
    });
  });

  it('answers a token it never issued with 401 invalid_token', async () => {
    await expectInvalidToken(`mcp_at_${'A'.repeat(43)}`);
  });
});

describe('the authorization code flow', () => {
  it('registers, authorizes, exchanges, calls /mcp, refreshes and revokes', async () => {
    const user = await createMcpUser(main.server.admin);
    const client = await register({
      client_name: 'Claude test host',
      client_uri: 'https://host.example',
    });
    expect(client).toMatchObject({
      client_name: 'Claude test host',
      client_uri: 'https://host.example',
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(client.client_id).toMatch(/^mcp_/);
    expect(client.client_secret).toBeUndefined();

    const authorized = await authorize(user, { client });
    // RFC 9207: the issuer comes back with the code, and the state is echoed unchanged.
    expect(authorized.callback.origin + authorized.callback.pathname).toBe(CALLBACK);
    expect(authorized.callback.searchParams.get('iss')).toBe(main.server.baseUrl);
    expect(authorized.callback.searchParams.get('state')).toBe(authorized.state);
    expect(authorized.params.get('code')).toMatch(/^mcp_ac_/);

    const tokens = await exchange(authorized);
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^mcp_at_/),
      token_type: 'bearer',
      expires_in: 900,
      refresh_token: expect.stringMatching(/^mcp_rt_/),
      scope: SCOPE,
    });
    const [connection] = await main.server.sql`
      select workspace_id, user_id, scope, revoked_at from oauth_connections
      where client_id = ${client.client_id}`;
    expect(connection).toEqual({
      workspaceId: user.workspaceId,
      userId: user.userId,
      scope: SCOPE,
      revokedAt: null,
    });

    await initialize(tokens.access_token);
    expect(await toolNames(tokens.access_token)).toEqual([
      'get_campaign_report',
      'get_completed_campaign_summary',
      'get_delivery_summary',
      'get_quick_send_report',
      'get_team_statistics',
      'list_recent_campaigns',
      'list_recent_quick_sends',
    ]);

    const refreshed = await refresh(client, tokens.refresh_token as string);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe(SCOPE);
    expect(await toolNames(refreshed.access_token)).toHaveLength(7);

    // Revoking the refresh token ends its grant: the access tokens issued with it too.
    await revoke(client, refreshed.refresh_token as string);
    await expectInvalidToken(refreshed.access_token);
    expect(await refusal(refresh(client, refreshed.refresh_token as string))).toMatchObject({
      status: 400,
      body: REFRESH_REVOKED,
    });
  });

  it('revokes a single access token at the revocation endpoint', async () => {
    const user = await createMcpUser(main.server.admin);
    const { client, tokens } = await connect(user);
    await revoke(client, tokens.access_token);
    await expectInvalidToken(tokens.access_token);
    // The refresh token of the grant still works and gives a fresh access token.
    const refreshed = await refresh(client, tokens.refresh_token as string);
    expect(await toolNames(refreshed.access_token)).toHaveLength(7);
  });

  it('answers revocation of unknown or other clients’ tokens with 200 and revokes nothing', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens } = await connect(user);
    const other = await register();
    await expect(revoke(other, tokens.access_token)).resolves.toBeUndefined();
    await expect(revoke(other, 'mcp_rt_never-issued')).resolves.toBeUndefined();
    expect(await toolNames(tokens.access_token)).toHaveLength(7);
  });

  it('echoes state and sends iss with access_denied when the user denies', async () => {
    const user = await createMcpUser(main.server.admin);
    const client = await register();
    const { challenge } = await pkce();
    const state = oauth.generateRandomState();
    const callback = await authorizeInForms(
      authorizationUrl(main, client, { code_challenge: challenge, state }).href,
      user,
      { decision: 'deny' },
    );
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect(callbackError(main, client, callback, state)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state,
      iss: main.server.baseUrl,
    });
    const [row] = await main.server.sql`
      select count(*)::int as count from oauth_connections where client_id = ${client.client_id}`;
    expect(row).toEqual({ count: 0 });
  });

  it('shows the client, the workspace and the callback before consent, and binds consent to the browser', async () => {
    const user = await createMcpUser(main.server.admin);
    const client = await register({ client_name: 'Evil <b>client</b>' });
    const { challenge } = await pkce();
    const start = await fetch(authorizationUrl(main, client, { code_challenge: challenge }), {
      redirect: 'manual',
    });
    expect(start.status).toBe(200);
    expect(start.headers.get('x-frame-options')).toBe('DENY');
    expect(start.headers.get('cache-control')).toBe('no-store');
    const requestId = /name="request" value="([^"]+)"/.exec(await start.text())?.[1] as string;
    const form = (path: string, fields: Record<string, string>, cookie?: string) =>
      fetch(`${main.server.baseUrl}/oauth/${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(cookie ? { cookie } : {}),
        },
        body: new URLSearchParams(fields),
      });

    const wrong = await form('sign-in', {
      request: requestId,
      email: user.email,
      password: 'nope-nope',
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('The email or password is incorrect.');

    const signedIn = await form('sign-in', {
      request: requestId,
      email: user.email,
      password: user.password,
    });
    expect(signedIn.status).toBe(200);
    const consent = await signedIn.text();
    expect(consent).toContain('Authorize Evil &lt;b&gt;client&lt;/b&gt;');
    expect(consent).toContain(`<strong>${user.workspaceName}</strong>`);
    expect(consent).toContain(`<p class="box" id="callback">${CALLBACK}</p>`);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^herald_oauth_browser=/);
    // Stored only now, under an id of its own.
    const storedId = /name="request" value="([^"]+)"/.exec(consent)?.[1] as string;
    expect(storedId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    // Whoever learns the request id cannot approve it from another browser.
    const elsewhere = await form('consent', { request: storedId, decision: 'approve' });
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toContain(
      'This authorization request has expired or is unknown.',
    );
    // Nor with the signed request of the sign-in form.
    const unsigned = await form('consent', { request: requestId, decision: 'approve' }, cookie);
    expect(unsigned.status).toBe(400);

    const approved = await form('consent', { request: storedId, decision: 'approve' }, cookie);
    expect(approved.status).toBe(303);
    expect(new URL(approved.headers.get('location') as string).searchParams.get('code')).toMatch(
      /^mcp_ac_/,
    );
    // Deciding consumes the request.
    const again = await form('consent', { request: storedId, decision: 'approve' }, cookie);
    expect(again.status).toBe(400);
  });

  it('serves the same authorization server under /mcp/oauth', async () => {
    const response = await fetchFrom(source)(`${main.server.baseUrl}/mcp/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CALLBACK] }),
      redirect: 'manual',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toMatchObject({
      client_name: 'Unnamed MCP client',
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
    });
  });
});

describe('PKCE', () => {
  it('refuses a wrong code_verifier', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    const other = oauth.generateRandomCodeVerifier();
    expect(await refusal(exchange(authorized, { verifier: other }))).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'code_verifier does not match the code_challenge.',
      },
    });
  });

  it('refuses a missing code_verifier', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    const refused = await refusal(exchange(authorized, { verifier: oauth.nopkce }));
    expect(refused).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: 'code_verifier is required.' },
    });
    expect(refused.headers.get('cache-control')).toBe('no-store');
    // A request missing the verifier does not use the code up.
    expect((await exchange(authorized)).scope).toBe(SCOPE);
  });

  it.each([
    ['the plain method', { code_challenge_method: 'plain' }, 'code_challenge_method must be S256.'],
    [
      'no method (plain by default)',
      { code_challenge_method: null },
      'code_challenge_method must be S256.',
    ],
    ['no challenge', { code_challenge: null }, 'code_challenge is required (PKCE).'],
    [
      'a challenge that is not a SHA-256',
      { code_challenge: 'too-short' },
      'code_challenge must be a base64url SHA-256 (43 characters).',
    ],
  ])(
    'refuses %s at the authorization endpoint, at the callback',
    async (_case, params, description) => {
      const client = await register();
      const { challenge } = await pkce();
      const state = oauth.generateRandomState();
      const response = await fetch(
        authorizationUrl(main, client, { code_challenge: challenge, state, ...params }),
        { redirect: 'manual' },
      );
      expect(response.status).toBe(303);
      const callback = new URL(response.headers.get('location') as string);
      expect(callbackError(main, client, callback, state)).toEqual({
        error: 'invalid_request',
        error_description: description,
        state,
        iss: main.server.baseUrl,
      });
    },
  );
});

describe('scope', () => {
  it('refuses a request without mcp:use with invalid_scope, at the callback', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const state = oauth.generateRandomState();
    for (const scope of ['openid', 'mcp:read', '']) {
      const response = await fetch(
        authorizationUrl(main, client, { code_challenge: challenge, state, scope }),
        { redirect: 'manual' },
      );
      expect(response.status).toBe(303);
      const callback = new URL(response.headers.get('location') as string);
      expect(callbackError(main, client, callback, state)).toEqual({
        error: 'invalid_scope',
        error_description: 'scope must include mcp:use.',
        state,
        iss: main.server.baseUrl,
      });
    }
  });

  it('grants mcp:use when it is asked for among others, and when no scope is asked', async () => {
    const user = await createMcpUser(main.server.admin);
    const among = await connect(user, { scope: 'openid mcp:use offline_access' });
    expect(among.tokens.scope).toBe(SCOPE);
    const client = await register();
    const { verifier, challenge } = await pkce();
    const state = oauth.generateRandomState();
    const url = authorizationUrl(main, client, { code_challenge: challenge, state, scope: null });
    const callback = await authorizeInForms(url.href, user);
    const params = oauth.validateAuthResponse(main.as, client, callback, state);
    const tokens = await exchange({ client, verifier, state, callback, params });
    expect(tokens.scope).toBe(SCOPE);
  });
});

describe('authorization codes', () => {
  it('refuses a reused code and revokes the tokens its first use obtained', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    const first = await exchange(authorized);
    expect(await toolNames(first.access_token)).toHaveLength(7);
    expect(await refusal(exchange(authorized))).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The authorization code has already been used.',
      },
    });
    await expectInvalidToken(first.access_token);
    expect(await refusal(refresh(authorized.client, first.refresh_token as string))).toMatchObject({
      status: 400,
      body: REFRESH_REVOKED,
    });
  });

  it('refuses a code presented by another client', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    const thief = await register();
    expect(await refusal(exchange(authorized, { client: thief }))).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The authorization code was issued to another client.',
      },
    });
  });

  it('refuses a code exchanged with another redirect_uri', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    expect(
      await refusal(exchange(authorized, { redirectUri: 'http://127.0.0.1:9/elsewhere' })),
    ).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'redirect_uri does not match the authorization request.',
      },
    });
  });

  it('refuses an expired code', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    await main.server.sql`
      update oauth_codes set expires_at = now() - interval '1 second'
      where connection_id in (select id from oauth_connections
                              where client_id = ${authorized.client.client_id})`;
    expect(await refusal(exchange(authorized))).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The authorization code has expired.' },
    });
  });

  it('refuses a code it never issued', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    const forged = new URLSearchParams(authorized.callback.search);
    forged.set('code', 'mcp_ac_forged');
    const params = oauth.validateAuthResponse(main.as, authorized.client, forged, authorized.state);
    expect(await refusal(exchange({ ...authorized, params }))).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The authorization code is invalid.' },
    });
  });
});

describe('the resource indicator (RFC 8707)', () => {
  it('refuses another resource at the authorization endpoint with invalid_target', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const state = oauth.generateRandomState();
    for (const resource of [
      'https://other.example/mcp',
      main.server.baseUrl,
      `${main.server.resource}//`,
    ]) {
      const response = await fetch(
        authorizationUrl(main, client, { code_challenge: challenge, state, resource }),
        { redirect: 'manual' },
      );
      expect(response.status).toBe(303);
      const callback = new URL(response.headers.get('location') as string);
      expect(callbackError(main, client, callback, state)).toEqual({
        error: 'invalid_target',
        error_description: `resource must be ${main.server.resource}.`,
        state,
        iss: main.server.baseUrl,
      });
    }
  });

  it('refuses another resource at the token endpoint with invalid_target', async () => {
    const user = await createMcpUser(main.server.admin);
    const authorized = await authorize(user);
    expect(
      await refusal(exchange(authorized, { resource: 'https://other.example/mcp' })),
    ).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_target',
        error_description: `resource must be ${main.server.resource}.`,
      },
    });
  });

  it('binds a token to the resource it was issued for', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens, connectionId } = await connect(user);
    await main.server.sql`
      update oauth_tokens set resource = 'https://other.example/mcp'
      where connection_id = ${connectionId} and kind = 'access'`;
    await expectInvalidToken(tokens.access_token);
  });
});

describe('redirect URIs', () => {
  it.each([
    [
      'plain HTTP off loopback',
      'http://client.example/callback',
      'http://client.example/callback must use HTTPS unless it is a loopback address.',
    ],
    [
      'a script scheme',
      'javascript:alert(1)',
      'javascript:alert(1) uses a scheme that cannot receive an authorization code.',
    ],
    [
      'a fragment',
      'https://client.example/cb#x',
      'https://client.example/cb#x must not contain a fragment.',
    ],
    ['a relative URL', '/callback', '/callback is not an absolute URL.'],
  ])('refuses to register %s', async (_case, uri, description) => {
    expect(await refusal(register({ redirect_uris: [uri] }))).toMatchObject({
      status: 400,
      body: { error: 'invalid_redirect_uri', error_description: description },
    });
  });

  it('accepts HTTPS, loopback and private-use callbacks when dynamic clients are allowed', async () => {
    const client = await register({
      redirect_uris: [
        'https://client.example/oauth/callback',
        'http://localhost:33418/callback',
        'http://[::1]:8080/cb',
        'cursor://anysphere.cursor-mcp/oauth/callback',
      ],
    });
    expect(client.redirect_uris).toHaveLength(4);
  });

  it('refuses a registration without redirect_uris', async () => {
    const response = await registrationRequest({ client_name: 'No callback' });
    expect(await refusal(oauth.processDynamicClientRegistrationResponse(response))).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_redirect_uri',
        error_description: 'redirect_uris: Invalid input: expected array, received undefined',
      },
    });
  });

  describe('at the authorization endpoint (a JSON error, never a redirect)', () => {
    async function authorizeDirectly(url: URL) {
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      return { status: response.status, body: await response.json() };
    }

    it('refuses a redirect_uri the client did not register', async () => {
      const client = await register();
      const { challenge } = await pkce();
      for (const redirectUri of [
        'https://attacker.example/callback',
        'http://127.0.0.1:9/callback/other',
        'http://127.0.0.1:9/callback?x=1',
        'http://localhost:9/callback/other',
      ]) {
        const url = authorizationUrl(main, client, {
          code_challenge: challenge,
          redirect_uri: redirectUri,
        });
        expect(await authorizeDirectly(url)).toEqual({
          status: 400,
          body: {
            error: 'invalid_request',
            error_description: 'redirect_uri is not registered for this client.',
          },
        });
      }
    });

    it('refuses an unknown or missing client_id', async () => {
      const client = { client_id: 'mcp_unknown', redirect_uris: [CALLBACK] };
      const { challenge } = await pkce();
      expect(
        await authorizeDirectly(authorizationUrl(main, client, { code_challenge: challenge })),
      ).toEqual({
        status: 400,
        body: {
          error: 'invalid_client',
          error_description: 'client_id is not a registered client.',
        },
      });
      expect(
        await authorizeDirectly(
          authorizationUrl(main, client, { code_challenge: challenge, client_id: null }),
        ),
      ).toEqual({
        status: 400,
        body: { error: 'invalid_request', error_description: 'client_id is required.' },
      });
    });

    it('needs redirect_uri when the client registered several', async () => {
      const client = await register({ redirect_uris: [CALLBACK, 'http://127.0.0.1:9/other'] });
      const { challenge } = await pkce();
      const url = authorizationUrl(main, client, { code_challenge: challenge, redirect_uri: null });
      expect(await authorizeDirectly(url)).toEqual({
        status: 400,
        body: {
          error: 'invalid_request',
          error_description: 'redirect_uri is required: the client registered several.',
        },
      });
    });

    it('refuses a parameter given twice', async () => {
      const client = await register();
      const { challenge } = await pkce();
      const url = authorizationUrl(main, client, { code_challenge: challenge });
      url.searchParams.append('state', 'one');
      url.searchParams.append('state', 'two');
      expect(await authorizeDirectly(url)).toEqual({
        status: 400,
        body: { error: 'invalid_request', error_description: 'state must be given exactly once.' },
      });
    });
  });

  it('lets a loopback callback use another port at authorization (RFC 8252 §7.3)', async () => {
    const user = await createMcpUser(main.server.admin);
    const client = await register();
    const redirectUri = 'http://127.0.0.1:54321/callback';
    const authorized = await authorize(user, { client, redirectUri });
    expect(authorized.callback.origin + authorized.callback.pathname).toBe(redirectUri);
    const tokens = await exchange(authorized, { redirectUri });
    expect(await toolNames(tokens.access_token)).toHaveLength(7);
  });

  describe('with MCP_REDIRECT_URIS (a restricted installation)', () => {
    let restricted: Target;
    const HTTPS_CALLBACK = 'https://app.example.com/oauth/callback?tenant=1';
    const LOOPBACK_CALLBACK = 'http://127.0.0.1:8765/callback';

    beforeAll(async () => {
      const server = await openMcpServer({
        MCP_REDIRECT_URIS: `${HTTPS_CALLBACK}, ${LOOPBACK_CALLBACK}`,
      });
      restricted = { server, as: await discover(server) };
    });
    afterAll(() => restricted.server.close());

    it.each([
      ['the exact HTTPS callback', HTTPS_CALLBACK],
      ['the loopback callback', LOOPBACK_CALLBACK],
      ['the loopback callback on another port', 'http://127.0.0.1:49152/callback'],
      ['the loopback callback on another loopback name', 'http://localhost:8765/callback'],
    ])('registers %s', async (_case, uri) => {
      const client = await register({ redirect_uris: [uri] }, restricted);
      expect(client.redirect_uris).toEqual([uri]);
    });

    it.each([
      ['another query', 'https://app.example.com/oauth/callback?tenant=2'],
      ['no query', 'https://app.example.com/oauth/callback'],
      ['another HTTPS port', 'https://app.example.com:8443/oauth/callback?tenant=1'],
      ['another host', 'https://evil.example.com/oauth/callback?tenant=1'],
      ['HTTP instead of HTTPS', 'http://app.example.com/oauth/callback?tenant=1'],
      ['another loopback path', 'http://127.0.0.1:8765/other'],
      ['another loopback host name on another path', 'http://localhost:8765/other'],
      ['a loopback query', 'http://127.0.0.1:8765/callback?x=1'],
      ['a callback an open server would take', 'https://client.example/callback'],
    ])('refuses to register %s', async (_case, uri) => {
      expect(await refusal(register({ redirect_uris: [uri] }, restricted))).toMatchObject({
        status: 400,
        body: {
          error: 'invalid_redirect_uri',
          error_description: `${uri} is not on this server's callback allowlist.`,
        },
      });
    });

    it('refuses at sign-in a callback registered before the allowlist applied', async () => {
      // Registered while dynamic registration was open (same database, unrestricted server).
      const client = await register({ redirect_uris: ['https://client.example/callback'] });
      const { challenge } = await pkce();
      const response = await fetch(
        authorizationUrl(restricted, client, { code_challenge: challenge }),
        {
          redirect: 'manual',
        },
      );
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.json()).toEqual({
        error: 'invalid_request',
        error_description: `https://client.example/callback is not on this server's callback allowlist.`,
      });
    });

    it('completes a flow on an allowed loopback callback with a port of its own', async () => {
      const user = await createMcpUser(restricted.server.admin);
      const client = await register(
        { redirect_uris: ['http://127.0.0.1:40000/callback'] },
        restricted,
      );
      const authorized = await authorize(user, { client, target: restricted });
      const tokens = await exchange(authorized, { target: restricted });
      expect(tokens.scope).toBe(SCOPE);
    });

    it('sends errors to an HTTPS callback the operator allowed', async () => {
      const client = await register({ redirect_uris: [HTTPS_CALLBACK] }, restricted);
      const state = oauth.generateRandomState();
      const response = await fetch(
        authorizationUrl(restricted, client, { response_type: 'token', state }),
        { redirect: 'manual' },
      );
      expect(response.status).toBe(303);
      const callback = new URL(response.headers.get('location') as string);
      expect(callback.origin + callback.pathname + callback.searchParams.get('tenant')).toBe(
        'https://app.example.com/oauth/callback1',
      );
      expect(callbackError(restricted, client, callback, state)).toEqual({
        error: 'unsupported_response_type',
        error_description: 'response_type must be code.',
        state,
        iss: restricted.server.baseUrl,
      });
    });
  });

  describe('errors before the user saw the callback (RFC 9700 §4.11.2: no open redirector)', () => {
    it.each([
      ['an HTTPS callback anyone could register', 'https://attacker.example/landing'],
      ['a private-use scheme', 'com.example.app:/oauth/callback'],
    ])('shows an error page instead of redirecting to %s', async (_case, uri) => {
      const client = await register({ client_name: 'Shady client', redirect_uris: [uri] });
      const { challenge } = await pkce();
      for (const [params, description] of [
        [{ response_type: 'token' }, 'response_type must be code. (unsupported_response_type)'],
        [{ scope: 'openid' }, 'scope must include mcp:use. (invalid_scope)'],
        [{ code_challenge: null }, 'code_challenge is required (PKCE). (invalid_request)'],
      ] as const) {
        const url = authorizationUrl(main, client, { code_challenge: challenge, ...params });
        const response = await fetch(url, {
          redirect: 'manual',
        });
        expect(response.status).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(await response.text()).toContain(
          `<h1>Authorization failed</h1><p>Shady client sent an authorization request that cannot be accepted: ${description} Return to the client and try again.</p>`,
        );
      }
    });
  });

  describe('with MCP_ALLOW_DYNAMIC_CLIENTS=false and no allowlist', () => {
    let closed: Target;
    beforeAll(async () => {
      const server = await openMcpServer({ MCP_ALLOW_DYNAMIC_CLIENTS: 'false' });
      closed = { server, as: await discover(server) };
    });
    afterAll(() => closed.server.close());

    it.each([
      ['a loopback callback', CALLBACK],
      ['an HTTPS callback', 'https://client.example/callback'],
    ])('refuses %s', async (_case, uri) => {
      expect(await refusal(register({ redirect_uris: [uri] }, closed))).toMatchObject({
        status: 400,
        body: {
          error: 'invalid_redirect_uri',
          error_description:
            'This server accepts no callbacks: dynamic clients are off and the callback allowlist is empty.',
        },
      });
    });
  });
});

describe('client registration', () => {
  it('gives a client_secret_post client a secret that it must present', async () => {
    const user = await createMcpUser(main.server.admin);
    const client = await register({ token_endpoint_auth_method: 'client_secret_post' });
    expect(client).toMatchObject({
      token_endpoint_auth_method: 'client_secret_post',
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_secret_expires_at: 0,
    });
    const secret = client.client_secret as string;
    const authorized = await authorize(user, { client });
    const unauthenticated = {
      status: 401,
      body: { error: 'invalid_client', error_description: 'Client authentication failed.' },
    };
    expect(await refusal(exchange(authorized))).toMatchObject(unauthenticated);
    expect(
      await refusal(exchange(authorized, { auth: oauth.ClientSecretPost(`${secret}x`) })),
    ).toMatchObject(unauthenticated);
    // A failed client authentication does not use the code up.
    const tokens = await exchange(authorized, { auth: oauth.ClientSecretPost(secret) });
    expect(await refusal(refresh(client, tokens.refresh_token as string))).toMatchObject(
      unauthenticated,
    );
    const refreshed = await refresh(
      client,
      tokens.refresh_token as string,
      oauth.ClientSecretPost(secret),
    );
    expect(await refusal(revoke(client, refreshed.access_token))).toMatchObject(unauthenticated);
    await revoke(client, refreshed.access_token, oauth.ClientSecretPost(secret));
    await expectInvalidToken(refreshed.access_token);
  });

  it('refuses an authentication method other than none and client_secret_post', async () => {
    expect(
      await refusal(register({ token_endpoint_auth_method: 'client_secret_basic' })),
    ).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_client_metadata',
        error_description: 'token_endpoint_auth_method must be none or client_secret_post.',
      },
    });
  });

  it('answers the 11th registration within a minute with 429 and Retry-After', async () => {
    // A bucket of its own: a fresh loopback address, or this suite's when only 127.0.0.1 exists.
    const address = source === '127.0.0.1' ? source : await pickSourceAddress(main.server.baseUrl);
    await clearRegistrationAttempts(address);
    const [{ startedAt }] = (await main.server
      .sql`select clock_timestamp() as started_at`) as unknown as [{ startedAt: Date }];
    try {
      for (let attempt = 1; attempt <= 10; attempt += 1) {
        const client = await register({}, main, address);
        expect(client.client_id).toMatch(/^mcp_/);
      }
      const response = await registrationRequest({ redirect_uris: [CALLBACK] }, main, address);
      expect(response.status).toBe(429);
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await refusal(oauth.processDynamicClientRegistrationResponse(response))).toMatchObject(
        {
          status: 429,
          body: {
            error: 'too_many_requests',
            error_description: `Too many client registrations from this address. Retry after ${retryAfter} seconds.`,
          },
        },
      );
      const [row] = await main.server.sql`
        select count(*)::int as count from oauth_clients
        where registered_from = ${address} and created_at >= ${startedAt}`;
      expect(row).toEqual({ count: 10 });

      // The window slides: once the first attempts are a minute old, registration is open again.
      await main.server.sql`
        update oauth_registration_attempts set at = at - interval '60 seconds' where ip = ${address}`;
      expect((await register({}, main, address)).client_id).toMatch(/^mcp_/);
    } finally {
      await clearRegistrationAttempts(address);
    }
  });

  it('ignores metadata members it does not use: neither stored nor echoed', async () => {
    const client = await register({
      client_uri: 'https://host.example',
      software_id: 'host-app',
      x_blob: 'a'.repeat(20_000),
      jwks: { keys: [{ kty: 'oct', k: 'AAAA' }] },
    });
    expect(client).toMatchObject({ client_uri: 'https://host.example', software_id: 'host-app' });
    expect(client).not.toHaveProperty('x_blob');
    expect(client).not.toHaveProperty('jwks');
    const [row] = await main.server.sql<{ metadata: Record<string, unknown> }[]>`
      select metadata from oauth_clients where id = ${client.client_id}`;
    expect(row?.metadata).toEqual({
      client_uri: 'https://host.example',
      software_id: 'host-app',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
  });

  it.each([
    [
      'client_name',
      { client_name: 'n'.repeat(101) },
      'Too big: expected string to have <=100 characters',
    ],
    [
      'client_uri',
      { client_uri: `https://host.example/${'a'.repeat(512)}` },
      'Too big: expected string to have <=512 characters',
    ],
    [
      'redirect_uris.0',
      { redirect_uris: [`http://127.0.0.1:9/${'a'.repeat(512)}`] },
      'Too big: expected string to have <=512 characters',
    ],
    [
      'contacts',
      { contacts: Array(4).fill('ops@host.example') },
      'Too big: expected array to have <=3 items',
    ],
    [
      'grant_types',
      { grant_types: Array(3).fill('refresh_token') },
      'Too big: expected array to have <=2 items',
    ],
    ['scope', { scope: 's'.repeat(201) }, 'Too big: expected string to have <=200 characters'],
    ['client_name', { client_name: 'line\nbreak' }, 'must not contain control characters'],
  ])('refuses %s over its cap', async (field, metadata, problem) => {
    const refused = await refusal(register(metadata as ClientMetadata));
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: field.startsWith('redirect_uris')
          ? 'invalid_redirect_uri'
          : 'invalid_client_metadata',
        error_description: `${field}: ${problem}`,
      },
    });
  });

  it('refuses a registration body over 64 KiB with 413', async () => {
    const response = await fetchFrom(source)(`${main.server.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CALLBACK], client_uri: 'x'.repeat(70_000) }),
      redirect: 'manual',
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Request body is too large',
    });
  });
});

describe('TRUSTED_PROXIES', () => {
  const registerVia = (target: Target, forwardedFor: string) =>
    fetchFrom(source)(`${target.server.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ redirect_uris: [CALLBACK] }),
      redirect: 'manual',
    });
  const registeredFrom = async (response: Response) => {
    const { client_id: id } = (await response.json()) as { client_id: string };
    const [row] = await main.server.sql<{ from: string }[]>`
      select host(registered_from) as from from oauth_clients where id = ${id}`;
    return row?.from;
  };

  it('is off by default: X-Forwarded-For does not move a client out of its bucket', async () => {
    const response = await registerVia(main, '198.51.100.77');
    expect(response.status).toBe(201);
    expect(await registeredFrom(response)).toBe(source);
  });

  describe('set to the load balancer', () => {
    let behindProxy: Target;
    beforeAll(async () => {
      const server = await openMcpServer({ TRUSTED_PROXIES: `${source}, 127.0.0.1` });
      behindProxy = { server, as: await discover(server) };
    });
    afterAll(() => behindProxy.server.close());

    it('limits registrations per forwarded client address', async () => {
      const [first, second] = ['203.0.113.41', '203.0.113.42'];
      for (const address of [first, second]) await clearRegistrationAttempts(address);
      try {
        for (let attempt = 1; attempt <= 10; attempt += 1) {
          const response = await registerVia(behindProxy, `${first}, ${source}`);
          expect(response.status).toBe(201);
          if (attempt === 1) expect(await registeredFrom(response)).toBe(first);
        }
        const refused = await registerVia(behindProxy, first);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
        const other = await registerVia(behindProxy, second);
        expect(other.status).toBe(201);
        expect(await registeredFrom(other)).toBe(second);
      } finally {
        for (const address of [first, second]) await clearRegistrationAttempts(address);
      }
    });

    it('counts a forwarded value that is no address against the proxy itself', async () => {
      const response = await registerVia(behindProxy, 'not-an-address');
      expect(response.status).toBe(201);
      expect(await registeredFrom(response)).toBe(source);
    });
  });
});

describe('the /mcp resource guard', () => {
  it('refuses a token without the mcp:use scope with 403 insufficient_scope', async () => {
    const user = await createMcpUser(main.server.admin);
    // No such token is issued any more (invalid_scope); one issued before could lack it.
    const { tokens, connectionId } = await connect(user);
    await main.server.sql`update oauth_tokens set scope = '' where connection_id = ${connectionId}`;
    const { response, challenges } = await rpc(tokens.access_token, TOOLS_LIST);
    const description = 'The access token lacks the mcp:use scope.';
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="${SCOPE}", resource_metadata="${resourceMetadataUrl()}", error_description="${description}"`,
    );
    expect(challenges?.[0]?.parameters).toMatchObject({
      error: 'insufficient_scope',
      scope: SCOPE,
    });
    expect(await response.json()).toEqual({
      error: 'insufficient_scope',
      error_description: description,
    });
  });

  it('refuses an expired access token with 401 invalid_token', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens, connectionId } = await connect(user);
    expect(await toolNames(tokens.access_token)).toHaveLength(7);
    await main.server.sql`
      update oauth_tokens set expires_at = now() - interval '1 second'
      where connection_id = ${connectionId} and kind = 'access'`;
    await expectInvalidToken(tokens.access_token);
  });

  it('refuses a revoked connection on the next call and refuses its refresh', async () => {
    const user = await createMcpUser(main.server.admin);
    const { client, tokens, connectionId } = await connect(user);
    expect(await toolNames(tokens.access_token)).toHaveLength(7);
    await revokeConnection(main.server.sql, connectionId);
    await expectInvalidToken(tokens.access_token);
    expect(await refusal(refresh(client, tokens.refresh_token as string))).toMatchObject({
      status: 400,
      body: REFRESH_REVOKED,
    });
    // The client reconnects: a new authorization makes a new connection.
    const again = await connect(user, { client });
    expect(again.connectionId).not.toBe(connectionId);
    expect(await toolNames(again.tokens.access_token)).toHaveLength(7);
  });

  it('stops a connection revoked with `herald mcp connections revoke` on the next call', async () => {
    const user = await createMcpUser(main.server.admin);
    const { client, tokens, connectionId } = await connect(user);
    expect(await toolNames(tokens.access_token)).toHaveLength(7);
    const revoked = await connectionsRevoke(main.server.admin, { id: String(connectionId) });
    expect(revoked.json).toEqual({ revoked: true });
    await expectInvalidToken(tokens.access_token);
    expect(await refusal(refresh(client, tokens.refresh_token as string))).toMatchObject({
      status: 400,
      body: REFRESH_REVOKED,
    });
  });

  it('accepts the bearer scheme name in any case (RFC 9110 §11.1)', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens } = await connect(user);
    const response = await fetch(main.server.resource, {
      method: 'POST',
      headers: {
        authorization: `bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      },
      body: JSON.stringify(TOOLS_LIST),
    });
    expect(response.status).toBe(200);
  });

  it('answers 404 at a URL other than /mcp and 405 for GET and DELETE', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens } = await connect(user);
    const elsewhere = await fetch(`${main.server.baseUrl}/mcp/x`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(TOOLS_LIST),
    });
    expect(elsewhere.status).toBe(404);
    expect(((await elsewhere.json()) as { code: string }).code).toBe('NOT-404');
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(main.server.resource, {
        method,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });
});

describe('refresh token rotation', () => {
  it('answers a rotated refresh token within 30 seconds with the same pair, and revokes the connection after', async () => {
    const user = await createMcpUser(main.server.admin);
    const { client, tokens, connectionId } = await connect(user);
    const original = tokens.refresh_token as string;
    const first = await refresh(client, original);
    // A concurrent refresh (two tabs, a retried request) presents the same token again: it gets
    // the same pair, never a second live one.
    const [second, third] = await Promise.all([
      refresh(client, original),
      refresh(client, original),
    ]);
    for (const again of [second, third]) {
      expect(again.access_token).toBe(first.access_token);
      expect(again.refresh_token).toBe(first.refresh_token);
      expect(again.expires_in).toBeGreaterThan(890);
      expect(again.expires_in).toBeLessThanOrEqual(900);
    }
    const [stored] = await main.server.sql<{ access: number; refresh: number }[]>`
      select count(*) filter (where kind = 'access')::int as access,
             count(*) filter (where kind = 'refresh')::int as refresh
      from oauth_tokens where connection_id = ${connectionId}`;
    expect(stored).toEqual({ access: 2, refresh: 2 });
    expect(await toolNames(first.access_token)).toHaveLength(7);

    await main.server.sql`
      update oauth_tokens set rotated_at = rotated_at - interval '31 seconds'
      where connection_id = ${connectionId} and rotated_at is not null`;
    expect(await refusal(refresh(client, original))).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The refresh token was already used; the connection has been revoked.',
      },
    });
    const [connection] = await main.server.sql<{ revoked: boolean }[]>`
      select revoked_at is not null as revoked from oauth_connections where id = ${connectionId}`;
    expect(connection?.revoked).toBe(true);
    await expectInvalidToken(first.access_token);
    expect(await refusal(refresh(client, first.refresh_token as string))).toMatchObject({
      status: 400,
      body: REFRESH_REVOKED,
    });
  });

  it('checks the client before anything: another client presenting a refresh token changes nothing', async () => {
    const user = await createMcpUser(main.server.admin);
    const { client, tokens, connectionId } = await connect(user);
    const thief = await register();
    expect(await refusal(refresh(thief, tokens.refresh_token as string))).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The refresh token is invalid.' },
    });
    const [token] = await main.server.sql<{ rotated: boolean }[]>`
      select rotated_at is not null as rotated from oauth_tokens
      where connection_id = ${connectionId} and kind = 'refresh'`;
    expect(token).toEqual({ rotated: false });
    // Half a minute later the real client refreshes, as it would have anyway.
    await main.server.sql`
      update oauth_tokens set rotated_at = rotated_at - interval '31 seconds'
      where connection_id = ${connectionId} and rotated_at is not null`;
    const refreshed = await refresh(client, tokens.refresh_token as string);
    expect(await toolNames(refreshed.access_token)).toHaveLength(7);
    const [connection] = await main.server.sql<{ revoked: boolean }[]>`
      select revoked_at is not null as revoked from oauth_connections where id = ${connectionId}`;
    expect(connection).toEqual({ revoked: false });
  });

  it('refuses another client’s refresh token and an expired one', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens, connectionId } = await connect(user);
    const other = await register();
    expect(await refusal(refresh(other, tokens.refresh_token as string))).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The refresh token is invalid.' },
    });
    const second = await connect(user);
    await main.server.sql`
      update oauth_tokens set expires_at = now() - interval '1 second'
      where connection_id = ${second.connectionId} and kind = 'refresh'`;
    expect(
      await refusal(refresh(second.client, second.tokens.refresh_token as string)),
    ).toMatchObject({ status: 400, body: REFRESH_REVOKED });
    expect(connectionId).not.toBe(second.connectionId);
  });

  it('refuses a refresh once the user is no longer an active member', async () => {
    const user = await createMcpUser(main.server.admin, { role: 'admin' });
    const { client, tokens } = await connect(user);
    await updateMember(main.server.sql, user.workspaceId, user.email, (member) => ({
      ...member,
      status: 'suspended',
    }));
    expect(await refusal(refresh(client, tokens.refresh_token as string))).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The user is no longer an active member of the workspace.',
      },
    });
  });
});

describe('workspaces', () => {
  it('binds a connection to the workspace the user picked, and only to it', async () => {
    const first = await createMcpUser(main.server.admin);
    const second = await createMcpUser(main.server.admin, { email: first.email });
    expect(second.userId).toBe(first.userId);
    // The first workspace has more members, so its statistics differ from the second's.
    await userCreate(main.server.admin, {
      workspace: first.workspaceSlug,
      email: `viewer@${first.workspaceSlug}.test`,
      password: 'correct horse battery',
      role: 'viewer',
    });

    const { tokens, connectionId } = await connect(first, { workspaceId: second.workspaceId });
    const [connection] = await main.server.sql`
      select workspace_id, user_id from oauth_connections where id = ${connectionId}`;
    expect(connection).toEqual({ workspaceId: second.workspaceId, userId: first.userId });

    const statistics = await callTool(tokens.access_token, 'get_team_statistics');
    expect(statistics.isError).toBeFalsy();
    expect(statistics.structuredContent).toMatchObject(teamStatistics(1, 1, 0));

    // Losing access to the picked workspace is not made up for by the other one.
    await main.server.sql`
      update workspace_members set status = 'suspended'
      where workspace_id = ${second.workspaceId} and user_id = ${first.userId}`;
    expect(await toolRefusal(tokens.access_token, 'get_team_statistics')).toBe(SUSPENDED);
  });
});

// --- Tool permissions (docs/spec.md §5.2 item 5) -------------------------------------------------------

const SUSPENDED = 'Insufficient access: your membership of this workspace is suspended.';
const NOT_MEMBER = 'Insufficient access: you are no longer a member of this workspace.';
const NO_API = 'Insufficient access: this workspace does not include API access.';
const needs = (...permissions: Permission[]) =>
  `Insufficient access: this tool needs the ${permissions.join(' and ')} permission${permissions.length > 1 ? 's' : ''} in this workspace.`;

/** Field names of the team statistics result (docs/spec.md §2.5 leaves them open). */
function teamStatistics(total: number, active: number, pending: number) {
  return { total_members: total, active_members: active, pending_invites: pending };
}

/** Each tool, valid arguments for it, and what it needs beyond developer_tools.read. */
const TOOLS: [string, Record<string, unknown>, Permission[]][] = [
  ['list_recent_campaigns', {}, ['campaigns.read']],
  ['get_campaign_report', { campaign_id: 1 }, ['campaigns.read']],
  ['list_recent_quick_sends', {}, ['campaigns.read']],
  ['get_quick_send_report', { quick_send_id: 1 }, ['campaigns.read']],
  ['get_delivery_summary', {}, []],
  ['get_completed_campaign_summary', {}, ['reports.read']],
  ['get_team_statistics', {}, ['members.read']],
];
const ALL_PERMISSIONS: Permission[] = [
  'developer_tools.read',
  'campaigns.read',
  'messages.read',
  'reports.read',
  'members.read',
];

describe('tool permissions', () => {
  let user: McpUser;
  let accessToken: string;

  beforeAll(async () => {
    await clearRegistrationAttempts(source);
    user = await createMcpUser(main.server.admin);
    accessToken = (await connect(user)).tokens.access_token;
  });

  it.each(TOOLS)('%s needs developer_tools.read', async (name, args) => {
    await setPermissions(
      main.server.sql,
      user,
      ALL_PERMISSIONS.filter((permission) => permission !== 'developer_tools.read'),
    );
    expect(await toolRefusal(accessToken, name, args)).toBe(needs('developer_tools.read'));
  });

  it.each(
    TOOLS.filter(([, , required]) => required.length > 0).map(
      ([name, args, required]) => [name, required.join(', '), args, required] as const,
    ),
  )('%s needs %s', async (name, _names, args, required) => {
    await setPermissions(
      main.server.sql,
      user,
      ALL_PERMISSIONS.filter((permission) => !required.includes(permission)),
    );
    expect(await toolRefusal(accessToken, name, args)).toBe(needs(...required));
    await setPermissions(main.server.sql, user, []);
    expect(await toolRefusal(accessToken, name, args)).toBe(
      needs('developer_tools.read', ...required),
    );
  });

  it.each(TOOLS)('%s runs with exactly the permissions it needs', async (name, args, required) => {
    await setPermissions(main.server.sql, user, ['developer_tools.read', ...required]);
    // The report tools are given ids that do not exist here: refused, but not for access.
    expect((await toolRefusal(accessToken, name, args)) ?? '').not.toMatch(/^Insufficient access/);
  });

  it('refuses on the next call once a permission is removed, and runs once it is back', async () => {
    await setPermissions(main.server.sql, user, ALL_PERMISSIONS);
    expect(await toolRefusal(accessToken, 'list_recent_campaigns')).toBeUndefined();
    await setPermissions(main.server.sql, user, ['developer_tools.read', 'members.read']);
    expect(await toolRefusal(accessToken, 'list_recent_campaigns')).toBe(needs('campaigns.read'));
    expect(await toolRefusal(accessToken, 'get_team_statistics')).toBeUndefined();
    await setPermissions(main.server.sql, user, ['developer_tools.read', 'campaigns.read']);
    expect(await toolRefusal(accessToken, 'get_team_statistics')).toBe(needs('members.read'));
    expect(await toolRefusal(accessToken, 'list_recent_campaigns')).toBeUndefined();
  });

  it('does not regain a missing permission by signing in again', async () => {
    await setPermissions(main.server.sql, user, ['developer_tools.read']);
    const again = await connect(user);
    expect(await toolRefusal(again.tokens.access_token, 'get_team_statistics')).toBe(
      needs('members.read'),
    );
  });
});

describe('membership and entitlement on every call', () => {
  it('refuses every tool once the member is suspended, and again after reinstatement works', async () => {
    const user = await createMcpUser(main.server.admin, { role: 'admin' });
    const { tokens } = await connect(user);
    expect(await toolRefusal(tokens.access_token, 'get_team_statistics')).toBeUndefined();
    await updateMember(main.server.sql, user.workspaceId, user.email, (member) => ({
      ...member,
      status: 'suspended',
    }));
    for (const [name, args] of TOOLS) {
      expect(await toolRefusal(tokens.access_token, name, args)).toBe(SUSPENDED);
    }
    await updateMember(main.server.sql, user.workspaceId, user.email, (member) => ({
      ...member,
      status: 'active',
    }));
    expect(await toolRefusal(tokens.access_token, 'get_team_statistics')).toBeUndefined();
  });

  it('refuses every tool once the membership is gone', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens } = await connect(user);
    expect(await toolRefusal(tokens.access_token, 'list_recent_quick_sends')).toBeUndefined();
    // Deleted behind the connection's back: the per-call check still refuses.
    await main.server.sql`
      delete from workspace_members
      where workspace_id = ${user.workspaceId} and user_id = ${user.userId}`;
    for (const [name, args] of TOOLS) {
      expect(await toolRefusal(tokens.access_token, name, args)).toBe(NOT_MEMBER);
    }
  });

  it('revokes the connections of a member removed by an operator', async () => {
    const user = await createMcpUser(main.server.admin, { role: 'admin' });
    const { client, tokens } = await connect(user);
    expect(await toolNames(tokens.access_token)).toHaveLength(7);
    const removed = await removeMember(main.server.sql, user.workspaceId, user.email);
    expect(removed).toEqual({
      outcome: 'removed',
      connectionsRevoked: 1,
      apiKeysRevoked: 0,
      invitationsRevoked: [],
    });
    await expectInvalidToken(tokens.access_token);
    expect(await refusal(refresh(client, tokens.refresh_token as string))).toMatchObject({
      status: 400,
      body: REFRESH_REVOKED,
    });
  });

  it('refuses every tool once the workspace loses API access', async () => {
    const user = await createMcpUser(main.server.admin);
    const { tokens } = await connect(user);
    expect(await toolRefusal(tokens.access_token, 'get_delivery_summary')).toBeUndefined();
    await updateWorkspace(main.server.sql, user.workspaceSlug, { apiEnabled: false });
    for (const [name, args] of TOOLS) {
      expect(await toolRefusal(tokens.access_token, name, args)).toBe(NO_API);
    }
    await updateWorkspace(main.server.sql, user.workspaceSlug, { apiEnabled: true });
    expect(await toolRefusal(tokens.access_token, 'get_delivery_summary')).toBeUndefined();
  });
});

describe('with MCP disabled', () => {
  let disabled: McpServerUnderTest;
  beforeAll(async () => {
    disabled = await openMcpServer({ MCP_ENABLED: 'false' });
  });
  afterAll(() => disabled.close());

  it.each([
    ['POST', '/mcp'],
    ['GET', '/mcp'],
    ['POST', '/oauth/register'],
    ['POST', '/mcp/oauth/register'],
    ['GET', '/oauth/authorize'],
    ['POST', '/oauth/token'],
    ['GET', '/.well-known/oauth-protected-resource'],
    ['GET', '/.well-known/oauth-protected-resource/mcp'],
    ['GET', '/.well-known/oauth-authorization-server'],
  ])('answers %s %s with 404', async (method, path) => {
    const response = await fetch(`${disabled.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: 'Bearer mcp_at_x' },
      ...(method === 'POST' ? { body: JSON.stringify({ redirect_uris: [CALLBACK] }) } : {}),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      title: 'Not Found',
      detail: `No route matches ${method} ${path}.`,
      instance: `${disabled.baseUrl}${path}`,
      code: 'NOT-404',
      link: '',
    });
  });

  it('is not discoverable by an OAuth client', async () => {
    const issuer = new URL(disabled.baseUrl);
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE });
    await expect(oauth.processDiscoveryResponse(issuer, response)).rejects.toMatchObject({
      code: oauth.RESPONSE_IS_NOT_CONFORM,
    });
  });
});
