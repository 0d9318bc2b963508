import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMcpUser,
  type McpServerUnderTest,
  type McpUser,
  openMcpServer,
} from '../support/mcp.js';
import { callbackListener, HostStorage } from '../support/mcp-host.js';
import {
  expectHeraldTools,
  expectSevenAnswersAndARefusal,
  type SeededBatches,
  seedBatches,
  sevenCallsAndARefusal,
} from '../support/mcp-tool-answers.js';

describe('an MCP host connects with OAuth through a real browser', { timeout: 120_000 }, () => {
  let mcp: McpServerUnderTest;
  let user: McpUser;
  let browser: Browser;
  let callback: Awaited<ReturnType<typeof callbackListener>>;
  let seeded: SeededBatches;

  beforeAll(async () => {
    mcp = await openMcpServer();
    user = await createMcpUser(mcp.admin);
    seeded = await seedBatches(mcp, user);
    callback = await callbackListener();
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    callback?.server.close();
    await mcp?.close();
  });

  const storage = () => new HostStorage(callback.url);
  const connect = async (host: HostStorage) => {
    const client = new Client({ name: 'herald-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcp.resource), { authProvider: host }),
    );
    return client;
  };

  it('discovers, registers, signs in and approves in Chromium, then calls every tool', async () => {
    const host = storage();
    await expect(connect(host)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(host.information?.client_id).toMatch(/^mcp_/);
    const authorizationUrl = host.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcp.resource);

    const page = await browser.newPage();
    const returned = callback.next();
    await page.goto(authorizationUrl.toString());
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Authorize Herald e2e host');
    await expect(page.locator('#callback').textContent()).resolves.toBe(callback.url);
    await expect(page.locator('body').textContent()).resolves.toContain(user.workspaceName);
    await page.getByRole('button', { name: 'Approve' }).click();
    const callbackUrl = await returned;
    await page.close();

    const code = callbackUrl.searchParams.get('code') as string;
    expect(callbackUrl.searchParams.get('iss')).toBe(mcp.baseUrl);
    const transport = new StreamableHTTPClientTransport(new URL(mcp.resource), {
      authProvider: host,
    });
    await transport.finishAuth(code);
    const client = new Client({ name: 'herald-e2e', version: '1.0.0' });
    await client.connect(transport);

    const { tools } = await client.listTools();
    expectHeraldTools(tools);

    const results: Parameters<typeof expectSevenAnswersAndARefusal>[0] = [];
    for (const [name, args] of sevenCallsAndARefusal(seeded)) {
      results.push((await client.callTool({ name, arguments: args })) as (typeof results)[0]);
    }
    expectSevenAnswersAndARefusal(results, seeded);
    const call = async (name: string) => {
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    };

    // Refresh: the access token expires, the SDK refreshes with the rotating refresh token.
    const firstTokens = host.savedTokens as OAuthTokens;
    await mcp.sql`update oauth_tokens set expires_at = now() - interval '1 second'
                  where kind = 'access'`;
    await call('get_team_statistics');
    expect(host.savedTokens?.access_token).not.toBe(firstTokens.access_token);
    expect(host.savedTokens?.refresh_token).not.toBe(firstTokens.refresh_token);

    // Revocation (RFC 7009) of the refresh token ends the grant; the next call is a 401.
    const revoked = await fetch(`${mcp.baseUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: host.savedTokens?.refresh_token as string,
        client_id: host.information?.client_id as string,
      }),
    });
    expect(revoked.status).toBe(200);
    const afterRevoke = await fetch(mcp.resource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${host.savedTokens?.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${mcp.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="mcp:use", error="invalid_token", error_description="The access token is invalid, expired or revoked."`,
    );
    // The SDK's refresh is refused too, so the host is sent back to sign in.
    host.authorizationUrl = undefined;
    await expect(client.callTool({ name: 'get_team_statistics', arguments: {} })).rejects.toThrow(
      UnauthorizedError,
    );
    expect(host.savedTokens).toBeUndefined();
    expect((host.authorizationUrl as URL | undefined)?.pathname).toBe('/oauth/authorize');
    await client.close();
  });
});
