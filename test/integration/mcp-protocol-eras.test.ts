/**
 * `/mcp` in both protocol eras, on the wire: a 2025 client opens with `initialize` and sends
 * plain JSON-RPC; a 2026-07-28 client sends `server/discover` and every request with the `_meta`
 * envelope and the `Mcp-Method` / `Mcp-Name` headers the server checks against the body. Real
 * SDK clients of each era are driven through OAuth in test/e2e/mcp-client.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../mcp/tools/index.js';
import {
  createMcpUser,
  type McpServerUnderTest,
  type McpUser,
  openMcpServer,
} from '../support/mcp.js';
import { connectWithForms } from '../support/oauth-forms.js';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
};
const SERVER_INFO = {
  name: 'herald-reporting',
  title: 'Herald reporting',
  version: '1.0.0',
  description:
    'Read-only delivery reporting for one Herald workspace: campaigns (named batches), Quick Sends and API sends, delivery totals and team counts.',
  icons: [
    {
      src: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
      mimeType: 'image/svg+xml',
      sizes: ['any'],
    },
  ],
};

describe('/mcp serves the 2025 era and 2026-07-28 from one stateless handler', () => {
  let mcp: McpServerUnderTest;
  let user: McpUser;
  let token: string;

  beforeAll(async () => {
    mcp = await openMcpServer();
    user = await createMcpUser(mcp.admin);
    token = (await connectWithForms(mcp.baseUrl, user)).accessToken;
  });

  afterAll(async () => {
    await mcp?.close();
  });

  const post = async (body: object, headers: Record<string, string> = {}) => {
    const response = await fetch(mcp.resource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      // biome-ignore lint/suspicious/noExplicitAny: answers of several shapes, each asserted by value
      body: (await response.json()) as Record<string, any>,
    };
  };
  const modern = (method: string, params: object = {}, headers: Record<string, string> = {}) =>
    post(
      { method, params: { ...params, _meta: ENVELOPE } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...headers },
    );

  it('answers a 2025 initialize in JSON with its version, the description and the icon', async () => {
    const answer = await post({
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw-2025', version: '1.0.0' },
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe('application/json');
    expect(answer.body.result.protocolVersion).toBe('2025-11-25');
    expect(answer.body.result.serverInfo).toEqual(SERVER_INFO);
  });

  it('lists every tool with its icon to a 2025 client, without 2026 result fields', async () => {
    const answer = await post(
      { method: 'tools/list', params: {} },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(answer.status).toBe(200);
    const listed = answer.body.result.tools as { name: string; icons: { src: string }[] }[];
    expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    for (const tool of listed) expect(tool.icons[0]?.src).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(answer.body.result).not.toHaveProperty('resultType');
    expect(answer.body.result).not.toHaveProperty('ttlMs');
  });

  it('answers server/discover with 2026-07-28, the server information and cache hints', async () => {
    const answer = await modern('server/discover');
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {} },
      resultType: 'complete',
      ttlMs: 3_600_000,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
  });

  it('lists the tools to a 2026 client with resultType and a shared one-hour cache hint', async () => {
    const answer = await modern('tools/list');
    expect(answer.status).toBe(200);
    expect(answer.body.result.tools).toHaveLength(tools.length);
    expect(answer.body.result).toMatchObject({
      resultType: 'complete',
      ttlMs: 3_600_000,
      cacheScope: 'public',
    });
  });

  it('calls a tool for a 2026 client, named by Mcp-Name', async () => {
    const answer = await modern(
      'tools/call',
      { name: 'get_team_statistics', arguments: {} },
      { 'mcp-name': 'get_team_statistics' },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { total_members: 1, active_members: 1, pending_invites: 0 },
    });
  });

  it('refuses a 2026 request whose Mcp-Name disagrees with the body', async () => {
    const answer = await modern(
      'tools/call',
      { name: 'get_team_statistics', arguments: {} },
      { 'mcp-name': 'list_recent_campaigns' },
    );
    expect(answer).toEqual({
      status: 400,
      contentType: 'application/json',
      body: {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32020,
          message:
            'Bad Request: the request headers and body disagree: the body carries params.name="get_team_statistics" but the Mcp-Name header names "list_recent_campaigns"',
          data: {
            mismatch: {
              header: 'list_recent_campaigns',
              body: 'the body carries params.name="get_team_statistics" but the Mcp-Name header names "list_recent_campaigns"',
            },
          },
        },
      },
    });
  });

  it('refuses a 2026 request without the Mcp-Method header', async () => {
    const answer = await post(
      { method: 'tools/list', params: { _meta: ENVELOPE } },
      { 'mcp-protocol-version': MODERN },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: -32020,
      message:
        'Bad Request: the request headers and body disagree: the body names method tools/list but the required Mcp-Method header is absent',
    });
  });

  it.each([
    ['null', null],
    ['a number', 7],
    ['no method', { jsonrpc: '2.0', id: 1 }],
    ['a 2026 method without its envelope', { jsonrpc: '2.0', id: 1, method: 'server/discover' }],
    ['an unknown method', { jsonrpc: '2.0', id: 1, method: 'tools/destroy', params: {} }],
  ])('answers %s with a JSON-RPC error, never a server error', async (_name, body) => {
    const response = await fetch(mcp.resource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBeGreaterThanOrEqual(200);
    expect(response.status, text).toBeLessThan(500);
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it('still asks a 2026 request for a token first', async () => {
    const response = await fetch(mcp.resource, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: ENVELOPE },
      }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${mcp.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="mcp:use"`,
    );
  });
});
