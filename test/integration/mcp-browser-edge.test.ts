/**
 * The browser edge of the MCP server (mcp/browser-edge.ts): the Host and Origin checks on /mcp
 * and the authorization server, CORS for the public-client endpoints only, and docs/spec.md §7's 404 for
 * an MCP request at a URL without /mcp (api/http-protocol.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertClient } from '../../db/oauth-clients.js';
import {
  authorizeInForms,
  createMcpUser,
  type McpServerUnderTest,
  openMcpServer,
} from '../support/mcp.js';

const LISTED_ORIGIN = 'https://app.example';
const FOREIGN_ORIGIN = 'https://evil.example';
const ALIAS_HOST = 'mcp.example';
const CALLBACK = 'http://127.0.0.1:9/callback';
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MCP_POST = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};
const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
  'access-control-allow-credentials',
];

/** Defaults: any origin (MCP_CORS_ORIGINS=*), no host alias. */
let open: McpServerUnderTest;
/** One listed origin and one host alias. */
let listed: McpServerUnderTest;

beforeAll(async () => {
  [open, listed] = await Promise.all([
    openMcpServer(),
    openMcpServer({ MCP_CORS_ORIGINS: LISTED_ORIGIN, MCP_ALLOWED_HOSTS: ALIAS_HOST }),
  ]);
});

afterAll(async () => {
  await Promise.all([open?.close(), listed?.close()]);
});

const corsHeadersOf = (headers: Record<string, unknown>) =>
  Object.fromEntries(
    CORS_HEADERS.flatMap((name) => (name in headers ? [[name, headers[name]]] : [])),
  );

const preflight = (server: McpServerUnderTest, url: string, method: string, headers = '') =>
  server.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin: 'https://inspector.example',
      'access-control-request-method': method,
      ...(headers && { 'access-control-request-headers': headers }),
    },
  });

/** An access token for a fresh owner, through the real sign-in and consent forms. */
async function accessToken(server: McpServerUnderTest): Promise<string> {
  const user = await createMcpUser(server.admin);
  const clientId = `edge-${randomBytes(6).toString('hex')}`;
  await insertClient(server.sql, {
    id: clientId,
    name: 'Browser edge client',
    redirectUris: [CALLBACK],
    tokenEndpointAuthMethod: 'none',
    secretHash: null,
    metadata: {},
    registeredFrom: '127.0.0.1',
  });
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${server.baseUrl}/oauth/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    resource: server.resource,
  }).toString();
  const code = (await authorizeInForms(authorize.toString(), user)).searchParams.get('code');
  const response = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code as string,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
      client_id: clientId,
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

describe('Origin', () => {
  it('refuses a foreign Origin on /mcp with 403 and a JSON-RPC error, without CORS headers', async () => {
    const response = await listed.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...MCP_POST, origin: FOREIGN_ORIGIN },
      payload: TOOLS_LIST,
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'The origin https://evil.example is not allowed.' },
      id: null,
    });
    expect(corsHeadersOf(response.headers)).toEqual({});
  });

  it('refuses it at /mcp written with percent-encoding too, as the router reads it', async () => {
    const response = await listed.app.inject({
      method: 'POST',
      url: '/%6Dcp',
      headers: { ...MCP_POST, origin: FOREIGN_ORIGIN },
      payload: TOOLS_LIST,
    });
    expect(response.statusCode).toBe(403);
  });

  it('refuses a foreign Origin on the token endpoint with 403 and an OAuth error', async () => {
    const response = await listed.app.inject({
      method: 'POST',
      url: '/mcp/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: FOREIGN_ORIGIN },
      payload: 'grant_type=authorization_code',
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The origin https://evil.example is not allowed.',
    });
  });

  it('lets a listed Origin read the 401 and its WWW-Authenticate', async () => {
    const response = await listed.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...MCP_POST, origin: LISTED_ORIGIN },
      payload: TOOLS_LIST,
    });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="/);
    expect(response.headers.vary).toBe('Origin');
    expect(corsHeadersOf(response.headers)).toEqual({
      'access-control-allow-origin': LISTED_ORIGIN,
      'access-control-expose-headers': 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
    });
  });

  it("takes PUBLIC_URL's own origin (and, on loopback, its other loopback names) and no Origin", async () => {
    const port = new URL(listed.baseUrl).port;
    for (const origin of [listed.baseUrl, `http://localhost:${port}`, undefined]) {
      const response = await listed.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...MCP_POST, ...(origin && { origin }) },
        payload: TOOLS_LIST,
      });
      expect(response.statusCode).toBe(401);
    }
  });

  it('takes any Origin by default (MCP_CORS_ORIGINS=*)', async () => {
    const response = await open.app.inject({
      method: 'GET',
      url: '/.well-known/oauth-authorization-server',
      headers: { origin: 'http://localhost:6274' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:6274');
  });

  it('lets a browser read a discovery 404, so its client tries the next well-known URL', async () => {
    const response = await open.app.inject({
      method: 'GET',
      url: '/.well-known/openid-configuration',
      headers: { origin: 'http://localhost:6274' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'NOT-404' });
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:6274');
  });

  it("lets the sign-in and consent pages be posted from Herald's own pages only", async () => {
    const post = (origin?: string) =>
      open.app.inject({
        method: 'POST',
        url: '/oauth/consent',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(origin && { origin }),
        },
        payload: 'request=unknown&decision=approve',
      });
    const foreign = await post('http://localhost:6274');
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The origin http://localhost:6274 may not post to this page.',
    });
    // A page under Referrer-Policy: no-referrer posts its forms with `Origin: null`.
    for (const origin of ['null', open.baseUrl, undefined]) {
      const response = await post(origin);
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('Request expired');
      expect(corsHeadersOf(response.headers)).toEqual({});
    }
  });
});

describe('Host', () => {
  it('answers 421 to a Host that is not PUBLIC_URL, an alias or loopback (DNS rebinding)', async () => {
    const mcp = await listed.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...MCP_POST, host: 'rebound.example:3000' },
      payload: TOOLS_LIST,
    });
    expect(mcp.statusCode).toBe(421);
    expect(mcp.json()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: 'This server does not answer for the host rebound.example:3000.',
      },
      id: null,
    });
    const discovery = await listed.app.inject({
      method: 'GET',
      url: '/.well-known/oauth-protected-resource/mcp',
      headers: { host: 'rebound.example' },
    });
    expect(discovery.statusCode).toBe(421);
    expect(discovery.json()).toEqual({
      error: 'invalid_request',
      error_description: 'This server does not answer for the host rebound.example.',
    });
  });

  it('answers under an MCP_ALLOWED_HOSTS alias and a loopback name', async () => {
    for (const host of [ALIAS_HOST, 'MCP.example:443', 'localhost:80', '[::1]:3000']) {
      const response = await listed.app.inject({
        method: 'GET',
        url: '/.well-known/oauth-protected-resource/mcp',
        headers: { host },
      });
      expect(response.statusCode).toBe(200);
    }
  });
});

describe('CORS preflight', () => {
  const answer = (methods: string) => ({
    'access-control-allow-origin': 'https://inspector.example',
    'access-control-allow-methods': methods,
    'access-control-allow-headers':
      'Authorization, Content-Type, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID',
    'access-control-expose-headers': 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
    'access-control-max-age': '7200',
  });

  it.each([
    ['/mcp', 'POST', 'GET, POST, DELETE'],
    ['/oauth/token', 'POST', 'POST'],
    ['/oauth/register', 'POST', 'POST'],
    ['/mcp/oauth/revoke', 'POST', 'POST'],
    ['/.well-known/oauth-protected-resource/mcp', 'GET', 'GET'],
    ['/.well-known/oauth-authorization-server', 'GET', 'GET'],
  ])('answers 204 at %s', async (url, method, methods) => {
    const response = await preflight(open, url, method, 'authorization, content-type');
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers.vary).toBe('Origin');
    expect(corsHeadersOf(response.headers)).toEqual(answer(methods));
  });

  it('allows the Mcp-Param-* headers a 2026-07-28 client mirrors arguments into', async () => {
    const response = await preflight(open, '/mcp', 'POST', 'mcp-method, mcp-param-region');
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-headers']).toBe(
      `${answer('')['access-control-allow-headers']}, mcp-param-region`,
    );
  });

  it('refuses a preflight at the authorization page: a page, not a CORS endpoint', async () => {
    const response = await preflight(open, '/oauth/authorize', 'POST');
    expect(response.statusCode).toBe(403);
    expect(corsHeadersOf(response.headers)).toEqual({});
  });

  it('refuses a preflight from an origin not listed, with no CORS headers', async () => {
    const response = await listed.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: { origin: FOREIGN_ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(response.statusCode).toBe(403);
    expect(corsHeadersOf(response.headers)).toEqual({});
  });

  it('is never answered for the REST API or the console', async () => {
    const cases = [
      ['/api/v1/messages', 405],
      ['/console', 405],
    ] as const;
    for (const [url, status] of cases) {
      const response = await preflight(open, url, 'POST', 'authorization');
      expect(response.statusCode).toBe(status);
      expect(corsHeadersOf(response.headers)).toEqual({});
    }
  });
});

describe('A browser client with a token', () => {
  it('reads the tools/list answer from a listed origin', async () => {
    const token = await accessToken(listed);
    const response = await listed.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...MCP_POST, origin: LISTED_ORIGIN, authorization: `Bearer ${token}` },
      payload: TOOLS_LIST,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().result.tools).toHaveLength(7);
    expect(response.headers.vary).toBe('Origin');
    expect(corsHeadersOf(response.headers)).toEqual({
      'access-control-allow-origin': LISTED_ORIGIN,
      'access-control-expose-headers': 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
    });
  });
});

describe('docs/spec.md §7: an MCP request at a URL without /mcp', () => {
  let token: string;

  beforeAll(async () => {
    token = await accessToken(open);
  });

  it.each([
    ['/', MCP_POST],
    ['/', { 'content-type': 'application/json' }],
    ['/api/v1/docs', MCP_POST],
  ])('answers the 404 of docs/spec.md §2.4 at %s, with a valid token', async (url, headers) => {
    const response = await open.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, authorization: `Bearer ${token}` },
      payload: TOOLS_LIST,
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      title: 'Not Found',
      detail: `No route matches POST ${url}.`,
      instance: `${open.baseUrl}${url}`,
      code: 'NOT-404',
      link: '',
    });
  });

  it("answers 404 under /console too, with the console's own not-found page", async () => {
    const response = await open.app.inject({
      method: 'POST',
      url: '/console',
      headers: { ...MCP_POST, authorization: `Bearer ${token}` },
      payload: TOOLS_LIST,
    });
    expect(response.statusCode).toBe(404);
  });
});
