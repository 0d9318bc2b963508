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

describe('an MCP host connects with OAuth through a real browser', { timeout: 120_000 }, () => {
  let mcp: McpServerUnderTest;
  let user: McpUser;
  let browser: Browser;
  let callback: Awaited<ReturnType<typeof callbackListener>>;
  let campaignId: number;
  let quickSendId: number;

  beforeAll(async () => {
    mcp = await openMcpServer();
    user = await createMcpUser(mcp.admin);
    ({ campaignId, quickSendId } = await seedBatches(mcp, user));
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
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_campaign_report',
      'get_completed_campaign_summary',
      'get_delivery_summary',
      'get_quick_send_report',
      'get_team_statistics',
      'list_recent_campaigns',
      'list_recent_quick_sends',
    ]);
    for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);

    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      return result.structuredContent as Record<string, unknown>;
    };
    const campaigns = await call('list_recent_campaigns', { limit: 5 });
    expect((campaigns.campaigns as { id: number }[]).map((item) => item.id)).toEqual([campaignId]);
    const campaign = await call('get_campaign_report', { campaign_id: campaignId });
    expect(campaign.campaign).toMatchObject({ id: campaignId, name: 'Spring sale', recipients: 2 });
    const quickSends = await call('list_recent_quick_sends', {});
    expect((quickSends.quick_sends as { id: number }[]).map((item) => item.id)).toEqual([
      quickSendId,
    ]);
    const quickSend = await call('get_quick_send_report', { quick_send_id: quickSendId });
    expect(quickSend.quick_send).toMatchObject({
      id: quickSendId,
      source: 'api',
      recipients: 3,
      sent: 2,
      failed_to_send: 1,
      delivered: 1,
      awaiting_delivery: 1,
      delivery_rate_percent: 50,
    });
    const summary = await call('get_delivery_summary', { days: 7 });
    expect(summary).toMatchObject({
      period_days: 7,
      period_type: 'rolling',
      sent: 4,
      delivered: 1,
    });
    const completed = await call('get_completed_campaign_summary', {});
    expect(completed).toMatchObject({ period_days: 30, recipients: 2, sent: 2 });
    const team = await call('get_team_statistics');
    expect(team).toEqual({ total_members: 1, active_members: 1, pending_invites: 0 });

    const refused = await client.callTool({
      name: 'get_quick_send_report',
      arguments: { quick_send_id: campaignId },
    });
    expect(refused.isError).toBe(true);

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

/** One named campaign (2 recipients, both sent) and one API Quick Send (3 recipients). */
async function seedBatches(mcp: McpServerUnderTest, user: McpUser) {
  const { sql } = mcp;
  const insertBatch = async (
    source: 'campaign' | 'api',
    name: string | null,
    recipients: string[],
  ) => {
    const [batch] = await sql<{ id: number }[]>`
      insert into campaigns (workspace_id, source, name, purpose, body, routing_type,
                             provider_slug, status, requested_recipients)
      values (${user.workspaceId}, ${source}, ${name}, 'marketing', 'Hello', 'direct', 'own',
              'queued', ${recipients.length})
      returning id`;
    const id = (batch as { id: number }).id;
    await sql`
      insert into campaign_messages (campaign_id, seq, recipient)
      select ${id}, ordinality, recipient from unnest(${recipients}::text[]) with ordinality as r(recipient, ordinality)`;
    return id;
  };
  const campaignId = await insertBatch('campaign', 'Spring sale', ['+61400000001', '+61400000002']);
  await sql`update campaign_messages set status = 'sent', submitted_at = now(),
            provider_slug = 'own', provider_message_id = 'c-' || seq where campaign_id = ${campaignId}`;
  await sql`update campaigns set status = 'completed', completed_at = now() where id = ${campaignId}`;

  const quickSendId = await insertBatch('api', null, [
    '+61400000003',
    '+61400000004',
    '+61400000005',
  ]);
  await sql`update campaign_messages set status = case when seq = 3 then 'failed' else 'sent' end,
            submitted_at = case when seq = 3 then null else now() end
            where campaign_id = ${quickSendId}`;
  await sql`update campaign_messages set delivery_status = 'delivered', delivered_at = now()
            where campaign_id = ${quickSendId} and seq = 1`;
  await sql`update campaigns set status = 'completed', completed_at = now() where id = ${quickSendId}`;
  return { campaignId, quickSendId };
}
