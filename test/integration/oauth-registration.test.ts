/**
 * Dynamic Client Registration (RFC 7591): metadata a consent page shows cannot carry invisible
 * format characters.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpServerUnderTest, openMcpServer } from '../support/mcp.js';

const CALLBACK = 'http://127.0.0.1:9/callback';
let server: McpServerUnderTest;

beforeAll(async () => {
  server = await openMcpServer({ TRUSTED_PROXIES: '127.0.0.1' });
});
afterAll(() => server.close());

/** A client address no other test uses (documentation range), so no limit is shared. */
const freshAddress = () =>
  `2001:db8:${randomBytes(6).toString('hex').match(/..../g)?.join(':')}::1`;

async function register(metadata: Record<string, unknown>, from = freshAddress()) {
  const response = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({
      client_name: 'Registration test',
      redirect_uris: [CALLBACK],
      ...metadata,
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const registeredFrom = async (address: string) =>
  (
    await server.sql<{ count: number }[]>`
      select count(*)::int as count from oauth_clients where registered_from = ${address}`
  )[0]?.count;

describe('format characters (Unicode Cf) in shown metadata', () => {
  const FORMAT =
    'must not contain format characters such as bidi controls or zero-width spaces (Unicode Cf)';

  it.each([
    ['a right-to-left override', 'client_name', { client_name: 'Claude\u202E edoC VS' }],
    ['a zero-width space', 'client_name', { client_name: 'Cur\u200Bsor' }],
    ['a first-strong isolate', 'client_name', { client_name: '\u2068Claude\u2069' }],
    ['a byte order mark', 'client_name', { client_name: '\uFEFFClaude' }],
    ['a zero-width joiner', 'software_id', { software_id: 'claude\u200Dai' }],
    ['a left-to-right mark', 'client_uri', { client_uri: 'https://claude.ai/\u200E' }],
    ['a tag character', 'contacts.0', { contacts: ['ops@host.example\u{E0041}'] }],
    ['a bidi embedding', 'scope', { scope: 'mcp:use\u202A' }],
  ])('refuses %s in %s, and stores nothing', async (_what, field, metadata) => {
    const from = freshAddress();
    expect(await register(metadata, from)).toEqual({
      status: 400,
      body: { error: 'invalid_client_metadata', error_description: `${field}: ${FORMAT}` },
    });
    expect(await registeredFrom(from)).toBe(0);
  });

  it('refuses one in a callback as an invalid redirect URI', async () => {
    expect(await register({ redirect_uris: ['com.example.app:/call\u2066back'] })).toEqual({
      status: 400,
      body: { error: 'invalid_redirect_uri', error_description: `redirect_uris.0: ${FORMAT}` },
    });
  });

  it('takes names in any script, emoji included, that have none', async () => {
    const registered = await register({ client_name: 'Клод · クロード · 🤖 Assistant' });
    expect(registered.status).toBe(201);
    expect(registered.body.client_name).toBe('Клод · クロード · 🤖 Assistant');
  });
});
