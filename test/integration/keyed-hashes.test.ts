/**
 * Keyed hashes after the move to one HKDF-derived key per purpose (security/keys.ts): what is
 * stored now uses the purpose's key, and what earlier releases stored (HMAC-SHA256 keyed with
 * HERALD_SECRET itself) still verifies: API keys (upgraded on first use), OTP codes, OAuth
 * client secrets, refresh and access tokens. And across a rotation of HERALD_SECRET's key ring.
 */
import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { addCredits } from '../../db/credits.js';
import { insertClient } from '../../db/oauth-clients.js';
import { keyedHash } from '../../security/tokens.js';
import { buildApp } from '../../server/app.js';
import {
  authorizeInForms,
  createMcpUser,
  type McpServerUnderTest,
  openMcpServer,
} from '../support/mcp.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const secret = inject('secret');
/** What every release before per-purpose keys stored. */
const legacyHash = (value: string) => createHmac('sha256', secret).update(value).digest();

let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 10);
});

afterAll(() => stack?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function storedKeyHash(keyId: number): Promise<Buffer | undefined> {
  const [row] = await stack.sql<{ tokenHash: Buffer }[]>`
    select token_hash from api_keys where id = ${keyId}`;
  return row?.tokenHash;
}

describe('API keys', () => {
  it('stores a new key under the api-key purpose key', async () => {
    const key = await tenant.keyWith(['messages:read']);
    expect(await storedKeyHash(key.id)).toEqual(keyedHash(secret, 'api-key-hash', key.token));
  });

  it('accepts a key stored under the legacy scheme and stores it under the current one', async () => {
    const key = await tenant.keyWith(['messages:read']);
    await stack.sql`update api_keys set token_hash = ${legacyHash(key.token)} where id = ${key.id}`;
    const lookup = () =>
      stack.app.inject({ method: 'GET', url: '/api/v1/messages/1', headers: bearer(key.token) });

    // 404: authenticated, and campaign 1 is not this workspace's.
    expect((await lookup()).statusCode).toBe(404);
    await expect
      .poll(() => storedKeyHash(key.id), { timeout: 5_000, interval: 50 })
      .toEqual(keyedHash(secret, 'api-key-hash', key.token));
    expect((await lookup()).statusCode).toBe(404);

    const forged = `${key.token.slice(0, -1)}${key.token.endsWith('A') ? 'B' : 'A'}`;
    const refused = await stack.app.inject({
      method: 'GET',
      url: '/api/v1/messages/1',
      headers: bearer(forged),
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ message: 'Unauthenticated.' });
  });
});

describe('OTP codes', () => {
  const recipient = () => `+61477${String(randomInt(1_000_000)).padStart(6, '0')}`;

  async function sentCode(to: string): Promise<{ requestId: string; code: string }> {
    const sent = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: bearer(tenant.token),
      payload: { recipient: to, purpose: 'login' },
    });
    expect(sent.statusCode).toBe(202);
    const requestId = sent.json().data.request_id as string;
    const response = await fetch(`${inject('simulatorUrl')}/v1/inbox?to=${encodeURIComponent(to)}`);
    const { messages } = (await response.json()) as { messages: { body: string }[] };
    const code = /(\d{6,8})/.exec(messages[0]?.body ?? '')?.[1];
    expect(code).toBeDefined();
    return { requestId, code: code as string };
  }

  const verify = (payload: object) =>
    stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: bearer(tenant.token),
      payload,
    });

  it('stores a code under the otp-code purpose key', async () => {
    const to = recipient();
    const { requestId, code } = await sentCode(to);
    const [row] = await stack.sql<{ codeHash: Buffer }[]>`
      select code_hash from otp_requests where id = ${requestId}`;
    expect(row?.codeHash).toEqual(keyedHash(secret, 'otp-code-hash', code));
  });

  it('verifies a code stored under the legacy scheme, and only that code', async () => {
    const to = recipient();
    const { requestId, code } = await sentCode(to);
    await stack.sql`
      update otp_requests set code_hash = ${legacyHash(code)} where id = ${requestId}`;
    const wrong = String((Number(code) + 1) % 10 ** code.length).padStart(code.length, '0');
    const refused = await verify({ recipient: to, code: wrong, request_id: requestId });
    expect(refused.statusCode).toBe(422);
    const verified = await verify({ recipient: to, code, request_id: requestId });
    expect(verified.statusCode).toBe(200);
  });
});

describe('OAuth', () => {
  let server: McpServerUnderTest;

  beforeAll(async () => {
    server = await openMcpServer();
  });

  afterAll(() => server?.close());

  async function tokenForm(fields: Record<string, string>) {
    const response = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  /** How many tokens are stored under `hash`. */
  async function tokensStoredUnder(hash: Buffer): Promise<number> {
    const [row] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from oauth_tokens where token_hash = ${hash}`;
    return row?.count ?? 0;
  }

  it('takes a client secret, refresh and access token stored under the legacy scheme', async () => {
    const user = await createMcpUser(server.admin);
    // A confidential client as an earlier release registered it: its secret hashed the old way.
    const clientSecret = randomBytes(32).toString('base64url');
    const clientId = `legacy-${randomBytes(6).toString('hex')}`;
    const redirectUri = 'http://127.0.0.1:9/callback';
    await insertClient(server.sql, {
      id: clientId,
      name: 'Legacy client',
      redirectUris: [redirectUri],
      tokenEndpointAuthMethod: 'client_secret_post',
      secretHash: legacyHash(clientSecret),
      metadata: {},
      registeredFrom: '127.0.0.1',
    });
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${server.baseUrl}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'mcp:use',
      resource: server.resource,
    }).toString();
    const code = (await authorizeInForms(authorize.toString(), user)).searchParams.get('code');
    const client = { client_id: clientId, client_secret: clientSecret };
    const exchanged = await tokenForm({
      grant_type: 'authorization_code',
      code: code as string,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...client,
    });
    expect(exchanged.status).toBe(200);
    const { refresh_token: refreshToken, access_token: accessToken } = exchanged.body as {
      refresh_token: string;
      access_token: string;
    };
    expect(await tokensStoredUnder(keyedHash(secret, 'oauth-token-hash', refreshToken))).toBe(1);

    // The access token, stored the old way, still opens /mcp.
    await server.sql`
      update oauth_tokens set token_hash = ${legacyHash(accessToken)}
      where token_hash = ${keyedHash(secret, 'oauth-token-hash', accessToken)}`;
    const mcp = await fetch(server.resource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'legacy', version: '1' },
        },
      }),
    });
    expect(mcp.status).toBe(200);

    // The refresh token, stored the old way, is exchanged once for a pair stored the new way.
    await server.sql`
      update oauth_tokens set token_hash = ${legacyHash(refreshToken)}
      where token_hash = ${keyedHash(secret, 'oauth-token-hash', refreshToken)}`;
    const refreshed = await tokenForm({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...client,
    });
    expect(refreshed.status).toBe(200);
    const renewed = refreshed.body.refresh_token as string;
    expect(await tokensStoredUnder(keyedHash(secret, 'oauth-token-hash', renewed))).toBe(1);

    const wrongSecret = await tokenForm({
      grant_type: 'refresh_token',
      refresh_token: renewed,
      client_id: clientId,
      client_secret: `${clientSecret}x`,
    });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe('invalid_client');
  });
});

/**
 * HERALD_SECRET as a key ring (docs/operations.md "Secret rotation"): an api started with a new key prepended
 * still finds what the old key hashed, and re-hashes what it can (API keys, OAuth client secrets)
 * on use, so they keep working once the old key leaves the ring. A token unused meanwhile cannot
 * be re-hashed (Herald never held it in clear) and is refused once the old key is gone.
 */
describe('a rotated key ring', () => {
  const newKey = randomBytes(32).toString('base64url');
  const rotating = `${newKey},${secret}`;
  const apps: FastifyInstance[] = [];

  async function apiWith(ring: string): Promise<FastifyInstance> {
    const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL, MCP_ENABLED: 'true' });
    const app = buildApp(
      { env, publicUrl: PUBLIC_URL, secret: ring, sql: stack.sql, temporal: stack.temporal },
      { logger: false },
    );
    apps.push(app);
    await app.ready();
    return app;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  const lookup = (app: FastifyInstance, token: string) =>
    app.inject({ method: 'GET', url: '/api/v1/messages/1', headers: bearer(token) });

  it('re-hashes an API key under the new key on use; one unused is refused once the old key is gone', async () => {
    const used = await tenant.keyWith(['messages:read']);
    const unused = await tenant.keyWith(['messages:read']);
    const duringRotation = await apiWith(rotating);
    // 404: authenticated, and campaign 1 is not this workspace's.
    expect((await lookup(duringRotation, used.token)).statusCode).toBe(404);
    await expect
      .poll(() => storedKeyHash(used.id), { timeout: 5_000, interval: 50 })
      .toEqual(keyedHash(newKey, 'api-key-hash', used.token));

    const afterRotation = await apiWith(newKey);
    expect((await lookup(afterRotation, used.token)).statusCode).toBe(404);
    const refused = await lookup(afterRotation, unused.token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ message: 'Unauthenticated.' });
  });

  it('verifies a code sent under the old key', async () => {
    const to = `+61478${String(randomInt(1_000_000)).padStart(6, '0')}`;
    const sent = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: bearer(tenant.token),
      payload: { recipient: to, purpose: 'login' },
    });
    expect(sent.statusCode).toBe(202);
    const requestId = sent.json().data.request_id as string;
    const inbox = await fetch(`${inject('simulatorUrl')}/v1/inbox?to=${encodeURIComponent(to)}`);
    const { messages } = (await inbox.json()) as { messages: { body: string }[] };
    const code = /(\d{6,8})/.exec(messages[0]?.body ?? '')?.[1] as string;
    const duringRotation = await apiWith(rotating);
    const verified = await duringRotation.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: bearer(tenant.token),
      payload: { recipient: to, code, request_id: requestId },
    });
    expect(verified.statusCode).toBe(200);
  });

  it('re-hashes an OAuth client secret under the new key when the client authenticates', async () => {
    const clientSecret = randomBytes(32).toString('base64url');
    const clientId = `ring-${randomBytes(6).toString('hex')}`;
    await insertClient(stack.sql, {
      id: clientId,
      name: 'Client registered before the rotation',
      redirectUris: ['http://127.0.0.1:9/callback'],
      tokenEndpointAuthMethod: 'client_secret_post',
      secretHash: keyedHash(secret, 'oauth-client-secret-hash', clientSecret),
      metadata: {},
      registeredFrom: '127.0.0.1',
    });
    // Client authentication comes first: a bad refresh token after it is invalid_grant (400).
    const refresh = (app: FastifyInstance) =>
      app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'mcp_rt_unknown',
          client_id: clientId,
          client_secret: clientSecret,
        }).toString(),
      });
    expect((await refresh(await apiWith(rotating))).json()).toMatchObject({
      error: 'invalid_grant',
    });
    const [row] = await stack.sql<{ secretHash: Buffer }[]>`
      select secret_hash from oauth_clients where id = ${clientId}`;
    expect(row?.secretHash).toEqual(keyedHash(newKey, 'oauth-client-secret-hash', clientSecret));
    expect((await refresh(await apiWith(newKey))).json()).toMatchObject({
      error: 'invalid_grant',
    });
  });
});
