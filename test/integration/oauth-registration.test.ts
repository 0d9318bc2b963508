/**
 * Dynamic Client Registration (RFC 7591): metadata a consent page shows cannot carry invisible
 * format characters; what registrations that never completed consent may hold, per client address
 * and per installation, and the caps on each registration's metadata.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql, TransactionSql } from '../../db/client.js';
import { insertClientWithinCaps, lockClientRegistrations } from '../../db/oauth-clients.js';
import {
  createMcpUser,
  type McpServerUnderTest,
  type McpUser,
  openMcpServer,
} from '../support/mcp.js';

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

/** A registration stored as the endpoint stores one, made `minutesAgo` before now. */
async function storedClient(sql: Sql | TransactionSql, address: string, minutesAgo: number) {
  const id = `mcp_test_${randomBytes(8).toString('hex')}`;
  await sql`
    insert into oauth_clients (id, name, redirect_uris, token_endpoint_auth_method,
                               registered_from, created_at)
    values (${id}, 'Seeded client', ${[CALLBACK]}, 'none', ${address},
            now() - make_interval(mins => ${minutesAgo}))`;
  return id;
}

/** Consent completed: the client has a connection. */
async function consented(sql: Sql | TransactionSql, clientId: string, user: McpUser) {
  await sql`
    insert into oauth_connections (workspace_id, user_id, client_id, scope)
    values (${user.workspaceId}, ${user.userId}, ${clientId}, 'mcp:use')`;
}

const unconsentedFrom = async (address: string) =>
  (
    await server.sql<{ id: string }[]>`
      select c.id from oauth_clients c
      where c.registered_from = ${address}
        and not exists (select 1 from oauth_connections k where k.client_id = c.id)
      order by c.created_at, c.id`
  ).map((row) => row.id);

const existing = async (sql: Sql | TransactionSql, ids: string[]) =>
  (await sql<{ id: string }[]>`select id from oauth_clients where id = any(${ids})`)
    .map((row) => row.id)
    .sort();

describe('registrations that never completed consent', () => {
  let user: McpUser;
  beforeAll(async () => {
    user = await createMcpUser(server.admin);
  });

  it("keeps one address's newest 100: the oldest unconsented goes, a consented one never", async () => {
    const address = freshAddress();
    const oldestConsented = await storedClient(server.sql, address, 1000);
    await consented(server.sql, oldestConsented, user);
    const seeded: string[] = [];
    for (let index = 0; index < 100; index += 1) {
      seeded.push(await storedClient(server.sql, address, 500 - index));
    }
    const registered = await register({}, address);
    expect(registered.status).toBe(201);
    const newest = registered.body.client_id as string;
    expect(await unconsentedFrom(address)).toEqual([...seeded.slice(1), newest]);
    expect(await existing(server.sql, [oldestConsented, seeded[0] as string])).toEqual([
      oldestConsented,
    ]);
  });

  it('holds exactly 100 when registrations from the address race', async () => {
    const address = freshAddress();
    const seeded: string[] = [];
    for (let index = 0; index < 98; index += 1) {
      seeded.push(await storedClient(server.sql, address, 500 - index));
    }
    const answers = await Promise.all(Array.from({ length: 6 }, () => register({}, address)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(201));
    const kept = await unconsentedFrom(address);
    expect(kept).toHaveLength(100);
    expect(kept.slice(0, 94)).toEqual(seeded.slice(4));
    expect(kept.slice(94).sort()).toEqual(answers.map((answer) => answer.body.client_id).sort());
  });

  it("keeps the installation's newest in the same way (in a transaction rolled back)", async () => {
    const rolledBack = new Error('rolled back');
    const run = server.sql.begin(async (tx) => {
      // Registrations, consents and clean-ups elsewhere wait, so that the count below holds.
      await lockClientRegistrations(tx);
      await tx`lock table oauth_clients, oauth_connections in share row exclusive mode`;
      // Older than anything else the run stores: the installation's oldest.
      const minutes = 60 * 24 * 365 * 30;
      const oldestConsented = await storedClient(tx, freshAddress(), minutes + 2);
      await consented(tx, oldestConsented, user);
      const oldest = await storedClient(tx, freshAddress(), minutes + 1);
      const next = await storedClient(tx, freshAddress(), minutes);
      const [unconsented] = await tx<{ count: number }[]>`
        select count(*)::int as count from oauth_clients c
        where not exists (select 1 from oauth_connections k where k.client_id = c.id)`;
      const newest = await insertClientWithinCaps(
        tx,
        {
          id: `mcp_test_${randomBytes(8).toString('hex')}`,
          name: 'Newest',
          redirectUris: [CALLBACK],
          tokenEndpointAuthMethod: 'none',
          secretHash: null,
          metadata: {},
          registeredFrom: freshAddress(),
        },
        { perAddress: 100, total: unconsented?.count ?? 0 },
      );
      expect(await existing(tx, [oldestConsented, oldest, next, newest.id])).toEqual(
        [oldestConsented, next, newest.id].sort(),
      );
      throw rolledBack;
    });
    await expect(run).rejects.toBe(rolledBack);
  });
});

describe('metadata caps', () => {
  const uri = (length: number) => `https://client.example/${'a'.repeat(length - 23)}`;

  it.each([
    [
      'redirect_uris',
      { redirect_uris: Array(6).fill(CALLBACK) },
      'Too big: expected array to have <=5 items',
    ],
    [
      'redirect_uris.0',
      { redirect_uris: [`http://127.0.0.1:9/${'a'.repeat(494)}`] },
      'Too big: expected string to have <=512 characters',
    ],
    [
      'client_name',
      { client_name: 'n'.repeat(101) },
      'Too big: expected string to have <=100 characters',
    ],
    ['client_uri', { client_uri: uri(513) }, 'Too big: expected string to have <=512 characters'],
    ['logo_uri', { logo_uri: uri(513) }, 'Too big: expected string to have <=512 characters'],
    ['tos_uri', { tos_uri: uri(513) }, 'Too big: expected string to have <=512 characters'],
    ['policy_uri', { policy_uri: uri(513) }, 'Too big: expected string to have <=512 characters'],
    [
      'contacts',
      { contacts: Array(4).fill('ops@host.example') },
      'Too big: expected array to have <=3 items',
    ],
    [
      'contacts.0',
      { contacts: [`${'o'.repeat(243)}@host.example`] },
      'Too big: expected string to have <=254 characters',
    ],
    [
      'software_id',
      { software_id: 's'.repeat(101) },
      'Too big: expected string to have <=100 characters',
    ],
    [
      'software_version',
      { software_version: '1'.repeat(51) },
      'Too big: expected string to have <=50 characters',
    ],
    ['scope', { scope: 's'.repeat(201) }, 'Too big: expected string to have <=200 characters'],
  ])('refuses %s over its cap', async (field, metadata, problem) => {
    const from = freshAddress();
    expect(await register(metadata, from)).toEqual({
      status: 400,
      body: {
        error: field.startsWith('redirect_uris')
          ? 'invalid_redirect_uri'
          : 'invalid_client_metadata',
        error_description: `${field}: ${problem}`,
      },
    });
    expect(await registeredFrom(from)).toBe(0);
  });

  it('takes what real clients send: four callbacks (VS Code) and every member at its cap', async () => {
    const registered = await register({
      client_name: 'n'.repeat(100),
      redirect_uris: [
        'https://insiders.vscode.dev/redirect',
        'https://vscode.dev/redirect',
        'http://127.0.0.1/',
        'http://127.0.0.1:33418/',
      ],
      client_uri: uri(512),
      contacts: ['ops@host.example'],
      software_id: 's'.repeat(100),
      software_version: '1'.repeat(50),
      scope: 'mcp:use',
    });
    expect(registered.status).toBe(201);
  });

  it('refuses a registration that would store over 4 KiB, saying how much it takes', async () => {
    const metadata = {
      redirect_uris: Array.from({ length: 5 }, (_, index) => `${uri(511)}${index}`),
      client_uri: uri(512),
      logo_uri: uri(512),
      tos_uri: uri(512),
    };
    const stored = {
      name: 'Registration test',
      redirectUris: metadata.redirect_uris,
      metadata: {
        client_uri: metadata.client_uri,
        logo_uri: metadata.logo_uri,
        tos_uri: metadata.tos_uri,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    };
    const size = Buffer.byteLength(JSON.stringify(stored));
    expect(size).toBeGreaterThan(4096);
    const from = freshAddress();
    expect(await register(metadata, from)).toEqual({
      status: 400,
      body: {
        error: 'invalid_client_metadata',
        error_description: `The registration's metadata takes ${size} bytes; at most 4096 are stored per client.`,
      },
    });
    expect(await registeredFrom(from)).toBe(0);
  });
});
