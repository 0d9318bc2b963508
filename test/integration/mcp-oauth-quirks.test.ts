/**
 * What real MCP clients send that an exact-string OAuth server refuses (issue 29 item 4): a
 * resource indicator in another RFC 3986 spelling, a loopback callback on another loopback name,
 * per-connector HTTPS callbacks under an allowlisted prefix, and registrations listing callbacks
 * of which only some are allowed. Driven over real HTTP against the real endpoints.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeInForms,
  createMcpUser,
  type McpServerUnderTest,
  openMcpServer,
} from '../support/mcp.js';

const CALLBACK = 'http://127.0.0.1:9/callback';
/** X-Forwarded-For is believed from loopback, so each registration has a bucket of its own. */
const PROXIED = { TRUSTED_PROXIES: '127.0.0.1' };

/** A client address no other test uses (documentation range), so no rate limit is shared. */
const freshAddress = () =>
  `2001:db8:${randomBytes(6).toString('hex').match(/..../g)?.join(':')}::2`;

async function register(server: McpServerUnderTest, redirectUris: string[]) {
  const response = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': freshAddress() },
    body: JSON.stringify({ client_name: 'Quirky client', redirect_uris: redirectUris }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function registeredClient(server: McpServerUnderTest, redirectUris = [CALLBACK]) {
  const { status, body } = await register(server, redirectUris);
  if (status !== 201) throw new Error(`register answered ${status}: ${JSON.stringify(body)}`);
  return body.client_id as string;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizationUrl(server: McpServerUnderTest, params: Record<string, string>): string {
  const url = new URL(`${server.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    state: 'the-state',
    ...params,
  }).toString();
  return url.href;
}

async function token(server: McpServerUnderTest, fields: Record<string, string>) {
  const response = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Registration, the authorization request as given, sign-in and consent: the callback and code. */
async function authorizeWith(
  server: McpServerUnderTest,
  options: { registered?: string[]; redirectUri?: string; resource?: string } = {},
) {
  const user = await createMcpUser(server.admin);
  const clientId = await registeredClient(server, options.registered ?? [CALLBACK]);
  const { verifier, challenge } = pkce();
  const redirectUri = options.redirectUri ?? CALLBACK;
  const callback = await authorizeInForms(
    authorizationUrl(server, {
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      resource: options.resource ?? server.resource,
    }),
    user,
  );
  const code = callback.searchParams.get('code') ?? '';
  const exchange = (fields: Record<string, string> = {}) =>
    token(server, {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      ...fields,
    });
  return { clientId, callback, code, exchange };
}

async function storedResources(server: McpServerUnderTest, clientId: string) {
  const rows = await server.sql<{ resource: string }[]>`
    select distinct t.resource from oauth_tokens t
    join oauth_connections k on k.id = t.connection_id
    where k.client_id = ${clientId}`;
  return rows.map((row) => row.resource);
}

const TOKENS = {
  access_token: expect.stringMatching(/^mcp_at_/),
  token_type: 'Bearer',
  expires_in: 900,
  refresh_token: expect.stringMatching(/^mcp_rt_/),
  scope: 'mcp:use',
};

describe('on an open installation', () => {
  let server: McpServerUnderTest;
  beforeAll(async () => {
    server = await openMcpServer(PROXIED);
  });
  afterAll(() => server.close());

  describe('the resource indicator, compared after RFC 3986 normalisation', () => {
    const spellings = (server: McpServerUnderTest) => {
      const { port } = new URL(server.baseUrl);
      return [
        `HTTP://127.0.0.1:${port}/mcp`,
        `http://127.0.0.1:${port}/mcp/`,
        `Http://127.0.0.1:${port}/mcp/`,
      ];
    };

    it('accepts another spelling at the authorization and token endpoints, and stores the canonical one', async () => {
      for (const resource of spellings(server)) {
        const authorized = await authorizeWith(server, { resource });
        expect(authorized.callback.searchParams.get('error'), resource).toBeNull();
        expect(await authorized.exchange({ resource })).toEqual({ status: 200, body: TOKENS });
        expect(await storedResources(server, authorized.clientId)).toEqual([server.resource]);
      }
    });

    it('still refuses another path, a second trailing slash, a fragment and another port', async () => {
      const { port } = new URL(server.baseUrl);
      for (const resource of [
        `http://127.0.0.1:${port}/MCP`,
        `http://127.0.0.1:${port}/mcp//`,
        `http://127.0.0.1:${port}/mcp#x`,
        `http://127.0.0.1:${Number(port) + 1}/mcp`,
        `http://localhost:${port}/mcp`,
      ]) {
        const clientId = await registeredClient(server);
        const response = await fetch(
          authorizationUrl(server, {
            client_id: clientId,
            redirect_uri: CALLBACK,
            code_challenge: pkce().challenge,
            resource,
          }),
          { redirect: 'manual' },
        );
        expect(response.status, resource).toBe(303);
        const callback = new URL(response.headers.get('location') as string);
        expect(Object.fromEntries(callback.searchParams), resource).toEqual({
          error: 'invalid_target',
          error_description: `resource must be ${server.resource}.`,
          state: 'the-state',
          iss: server.baseUrl,
        });
      }
      const authorized = await authorizeWith(server);
      expect(await authorized.exchange({ resource: `${server.resource}//` })).toEqual({
        status: 400,
        body: {
          error: 'invalid_target',
          error_description: `resource must be ${server.resource}.`,
        },
      });
    });
  });

  describe('loopback callbacks (RFC 8252 §7.3: any loopback name, any port)', () => {
    it.each([
      ['localhost on another port', 'http://localhost:54321/callback'],
      ['[::1] on another port', 'http://[::1]:54322/callback'],
      ['127.0.0.1 without a port', 'http://127.0.0.1/callback'],
    ])(
      'accepts %s for a client that registered 127.0.0.1, and sends the code there',
      async (_case, redirectUri) => {
        const authorized = await authorizeWith(server, { redirectUri });
        expect(authorized.callback.origin + authorized.callback.pathname).toBe(redirectUri);
        expect(authorized.code).toMatch(/^mcp_ac_/);
        expect(await authorized.exchange()).toEqual({ status: 200, body: TOKENS });
      },
    );

    it('binds the code to the callback used: the token request must present that one', async () => {
      const redirectUri = 'http://127.0.0.1:54323/callback';
      for (const presented of [
        CALLBACK,
        'http://127.0.0.1:54324/callback',
        'http://localhost:54323/callback',
      ]) {
        const authorized = await authorizeWith(server, { redirectUri });
        expect(await authorized.exchange({ redirect_uri: presented }), presented).toEqual({
          status: 400,
          body: {
            error: 'invalid_grant',
            error_description: 'redirect_uri does not match the authorization request.',
          },
        });
      }
    });

    it('still refuses another path or query on a loopback name', async () => {
      const clientId = await registeredClient(server);
      for (const redirectUri of ['http://localhost:9/other', 'http://[::1]:9/callback?x=1']) {
        const response = await fetch(
          authorizationUrl(server, {
            client_id: clientId,
            redirect_uri: redirectUri,
            code_challenge: pkce().challenge,
          }),
          { redirect: 'manual' },
        );
        expect({ status: response.status, body: await response.json() }, redirectUri).toEqual({
          status: 400,
          body: {
            error: 'invalid_request',
            error_description: 'redirect_uri is not registered for this client.',
          },
        });
      }
    });
  });
});

describe('with an MCP_REDIRECT_URIS prefix ending in *', () => {
  let server: McpServerUnderTest;
  const CONNECTOR = 'https://chatgpt.com/connector/oauth/abc123';
  beforeAll(async () => {
    server = await openMcpServer({
      ...PROXIED,
      MCP_REDIRECT_URIS: 'https://chatgpt.com/connector/oauth/*, http://127.0.0.1/callback',
    });
  });
  afterAll(() => server.close());

  it.each([
    ['a connector callback under the prefix', CONNECTOR],
    ['one with a query', 'https://chatgpt.com/connector/oauth/abc123?x=1'],
    ['one a level deeper', 'https://chatgpt.com/connector/oauth/abc/123'],
  ])('registers %s', async (_case, uri) => {
    const { status, body } = await register(server, [uri]);
    expect(status).toBe(201);
    expect(body.redirect_uris).toEqual([uri]);
    expect(body).not.toHaveProperty('dropped_redirect_uris');
  });

  it.each([
    ['a sibling sharing the prefix text', 'https://chatgpt.com/connector/oauthx'],
    ['the prefix without its slash', 'https://chatgpt.com/connector/oauth'],
    ['another host', 'https://evil.com/connector/oauth/abc123'],
    ['a host that only starts alike', 'https://chatgpt.com.evil.com/connector/oauth/abc123'],
    ['another port', 'https://chatgpt.com:8443/connector/oauth/abc123'],
    ['plain HTTP', 'http://chatgpt.com/connector/oauth/abc123'],
    ['dot segments', 'https://chatgpt.com/connector/oauth/../../evil'],
    ['encoded dot segments', 'https://chatgpt.com/connector/oauth/%2e%2e/%2e%2e/evil'],
    ['an encoded slash', 'https://chatgpt.com/connector/oauth/..%2F..%2Fevil'],
    ['a backslash', 'https://chatgpt.com/connector/oauth/..\\..\\evil'],
    ['credentials', 'https://chatgpt.com@evil.com/connector/oauth/abc123'],
  ])('refuses %s', async (_case, uri) => {
    expect(await register(server, [uri])).toEqual({
      status: 400,
      body: {
        error: 'invalid_redirect_uri',
        error_description:
          _case === 'credentials'
            ? `${uri} must not contain credentials.`
            : `${uri} is not on this server's callback allowlist.`,
      },
    });
  });

  it('keeps the allowed callbacks of a registration and names the dropped ones', async () => {
    const requested = [
      'https://other.example/callback',
      CONNECTOR,
      'http://127.0.0.1:33418/callback',
      'http://client.example/callback',
    ];
    const { status, body } = await register(server, requested);
    expect({ status, body }).toEqual({
      status: 201,
      body: {
        client_id: expect.stringMatching(/^mcp_/),
        client_id_issued_at: expect.any(Number),
        client_name: 'Quirky client',
        redirect_uris: [CONNECTOR, 'http://127.0.0.1:33418/callback'],
        dropped_redirect_uris: ['https://other.example/callback', 'http://client.example/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    });
    const [stored] = await server.sql<{ redirectUris: string[] }[]>`
      select redirect_uris from oauth_clients where id = ${body.client_id as string}`;
    expect(stored?.redirectUris).toEqual([CONNECTOR, 'http://127.0.0.1:33418/callback']);
    const response = await fetch(
      authorizationUrl(server, {
        client_id: body.client_id as string,
        redirect_uri: 'https://other.example/callback',
        code_challenge: pkce().challenge,
      }),
      { redirect: 'manual' },
    );
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'redirect_uri is not registered for this client.',
      },
    });
  });

  it('refuses a registration none of whose callbacks is allowed, naming each', async () => {
    expect(
      await register(server, ['https://other.example/callback', 'https://chatgpt.com/elsewhere']),
    ).toEqual({
      status: 400,
      body: {
        error: 'invalid_redirect_uri',
        error_description:
          "https://other.example/callback is not on this server's callback allowlist. https://chatgpt.com/elsewhere is not on this server's callback allowlist.",
      },
    });
  });

  it('completes a flow on a connector callback under the prefix', async () => {
    const authorized = await authorizeWith(server, {
      registered: [CONNECTOR],
      redirectUri: CONNECTOR,
    });
    expect(authorized.callback.origin + authorized.callback.pathname).toBe(CONNECTOR);
    expect(await authorized.exchange()).toEqual({ status: 200, body: TOKENS });
  });
});
