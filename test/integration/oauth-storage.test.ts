/**
 * What an unauthenticated request can make the authorization server store, and that every
 * expired OAuth record goes: /authorize stores nothing before sign-in (the request travels in
 * the sign-in form, signed), `state` is capped, and daily maintenance deletes authorization
 * requests, codes and tokens a day past their expiry and the limits' records of over a day ago.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { createMcpUser, type McpServerUnderTest, openMcpServer } from '../support/mcp.js';
import { connectWithForms } from '../support/oauth-forms.js';

const CALLBACK = 'http://127.0.0.1:9/callback';
let server: McpServerUnderTest;

beforeAll(async () => {
  server = await openMcpServer({ TRUSTED_PROXIES: '127.0.0.1' });
});
afterAll(() => server.close());

/** A client address of this file's own, so the registration limit never bites. */
const from = () => `192.0.2.${1 + (Date.now() % 250)}`;

async function registerClient(): Promise<string> {
  await server.sql`delete from oauth_registration_attempts where ip = ${from()}`;
  const response = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from() },
    body: JSON.stringify({ client_name: 'Storage test', redirect_uris: [CALLBACK] }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

function authorizeUrl(clientId: string, params: Record<string, string> = {}): URL {
  const url = new URL(`${server.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: randomBytes(32).toString('base64url').slice(0, 43),
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    ...params,
  }).toString();
  return url;
}

const pendingRequests = async (clientId: string) =>
  (
    await server.sql<{ count: number }[]>`
      select count(*)::int as count from oauth_authorizations where client_id = ${clientId}`
  )[0]?.count;

describe('an unauthenticated authorization request', () => {
  it('stores nothing: 50 requests, 50 sign-in pages, no row', async () => {
    const clientId = await registerClient();
    const pages = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(authorizeUrl(clientId, { state: 'x'.repeat(1024) })).then(async (response) => ({
          status: response.status,
          signIn: (await response.text()).includes('<h1>Sign in to Herald</h1>'),
        })),
      ),
    );
    expect(pages).toEqual(Array(50).fill({ status: 200, signIn: true }));
    expect(await pendingRequests(clientId)).toBe(0);
  });

  it('refuses a state over 1,024 printable characters at the callback, without echoing it', async () => {
    const clientId = await registerClient();
    for (const state of ['x'.repeat(1025), 'x'.repeat(14_000), 'tab\there']) {
      const response = await fetch(authorizeUrl(clientId, { state }), { redirect: 'manual' });
      expect(response.status).toBe(303);
      const callback = new URL(response.headers.get('location') as string);
      expect(Object.fromEntries(callback.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: 'state must be at most 1024 printable ASCII characters.',
        iss: server.baseUrl,
      });
    }
    expect(await pendingRequests(clientId)).toBe(0);
  });

  it('is stored once the user signed in, state and all', async () => {
    const clientId = await registerClient();
    const user = await createMcpUser(server.admin);
    const state = `~${'s'.repeat(1022)}~`;
    const page = await (await fetch(authorizeUrl(clientId, { state }))).text();
    const request = /name="request" value="([^"]+)"/.exec(page)?.[1] as string;
    const signedIn = await fetch(`${server.baseUrl}/oauth/sign-in`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': from(),
      },
      body: new URLSearchParams({ request, email: user.email, password: user.password }),
    });
    expect(signedIn.status).toBe(200);
    const [row] = await server.sql`
      select state, user_id, workspace_id, scope from oauth_authorizations
      where client_id = ${clientId}`;
    expect(row).toEqual({
      state,
      userId: user.userId,
      workspaceId: user.workspaceId,
      scope: 'mcp:use',
    });
  });

  it('answers a sign-in form whose signed request was altered as expired', async () => {
    const clientId = await registerClient();
    const page = await (await fetch(authorizeUrl(clientId))).text();
    const request = /name="request" value="([^"]+)"/.exec(page)?.[1] as string;
    const [payload, signature] = request.split('.') as [string, string];
    const altered = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    altered.redirectUri = 'https://attacker.example/cb';
    const forged = `${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;
    const user = await createMcpUser(server.admin);
    const response = await fetch(`${server.baseUrl}/oauth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: forged, email: user.email, password: user.password }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(
      '<p>This authorization request has expired or is unknown. Start again from your client.</p>',
    );
  });
});

describe('daily maintenance', () => {
  it('deletes OAuth records a day past their expiry, and the limits’ records over a day old', async () => {
    const user = await createMcpUser(server.admin);
    await server.sql`delete from oauth_registration_attempts where ip = '127.0.0.1'`;
    const { clientId } = await connectWithForms(server.baseUrl, user);
    const [connection] = await server.sql<{ id: number }[]>`
      select id from oauth_connections where client_id = ${clientId}`;
    const connectionId = (connection as { id: number }).id;
    const marker = randomBytes(8).toString('hex');
    const hash = (name: string) => Buffer.from(`${marker}:${name}`.padEnd(32, '.'));
    const ago = (interval: string) => server.sql`now() - ${interval}::interval`;

    for (const [name, expired] of [
      ['old', '25 hours'],
      ['recent', '1 hour'],
      ['live', '-1 hour'],
    ] as const) {
      await server.sql`
        insert into oauth_authorizations (client_id, redirect_uri, state, code_challenge, scope,
                                          resource, expires_at)
        values (${clientId}, ${CALLBACK}, ${`${marker}:${name}`}, 'c', 'mcp:use', 'r',
                ${ago(expired)})`;
      await server.sql`
        insert into oauth_codes (code_hash, connection_id, redirect_uri, code_challenge, resource,
                                 scope, expires_at)
        values (${hash(`code-${name}`)}, ${connectionId}, ${CALLBACK}, 'c', 'r', 'mcp:use',
                ${ago(expired)})`;
      for (const kind of ['access', 'refresh']) {
        await server.sql`
          insert into oauth_tokens (token_hash, kind, connection_id, family, resource, scope,
                                    expires_at)
          values (${hash(`${kind}-${name}`)}, ${kind}, ${connectionId}, gen_random_uuid(), 'r',
                  'mcp:use', ${ago(expired)})`;
      }
      await server.sql`
        insert into sign_in_failures (subject, failed_at)
        values (${hash(`failure-${name}`)}, ${ago(expired)})`;
    }
    const address = `2001:db8::${marker.slice(0, 4)}`;
    await server.sql`
      insert into oauth_registration_attempts (ip, at)
      values (${address}, now() - interval '25 hours'), (${address}, now() - interval '1 hour')`;

    const { purgeExpiredOAuthRecords } = createMaintenanceActivities({ sql: server.sql });
    // Small batches, as the workflow runs them: until one comes back short.
    while ((await purgeExpiredOAuthRecords({ batchSize: 2 })) >= 2) {}

    const names = ['old', 'recent', 'live'];
    const left: string[] = [];
    const keep = async (label: string, query: PromiseLike<readonly unknown[]>) => {
      if ((await query).length > 0) left.push(label);
    };
    for (const name of names) {
      await keep(
        `authorization ${name}`,
        server.sql`select 1 from oauth_authorizations where state = ${`${marker}:${name}`}`,
      );
      await keep(
        `code ${name}`,
        server.sql`select 1 from oauth_codes where code_hash = ${hash(`code-${name}`)}`,
      );
      for (const kind of ['access', 'refresh']) {
        await keep(
          `${kind} ${name}`,
          server.sql`select 1 from oauth_tokens where token_hash = ${hash(`${kind}-${name}`)}`,
        );
      }
      await keep(
        `failure ${name}`,
        server.sql`select 1 from sign_in_failures where subject = ${hash(`failure-${name}`)}`,
      );
    }
    const attempts = await server.sql<{ recent: boolean }[]>`
      select at > now() - interval '2 hours' as recent
      from oauth_registration_attempts where ip = ${address}`;
    for (const { recent } of attempts) left.push(`attempt ${recent ? 'recent' : 'old'}`);
    expect(left.sort()).toEqual([
      'access live',
      'access recent',
      'attempt recent',
      'authorization live',
      'authorization recent',
      'code live',
      'code recent',
      'failure live',
      'failure recent',
      'refresh live',
      'refresh recent',
    ]);
    // The connection's own tokens (issued by the flow above) are live and stay.
    const [live] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from oauth_tokens
      where connection_id = ${connectionId} and expires_at > now()`;
    // Its access and refresh token, and the two live ones inserted above.
    expect(live?.count).toBe(4);
  });
});
