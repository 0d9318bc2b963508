/**
 * A client that speaks only MCP 2026-07-28 (the TypeScript client SDK 2.x pinned to that
 * revision: `server/discover`, no `initialize`, no fallback) connects through OAuth with a browser
 * consent, lists the tools and calls all seven. The 2025-era client is test/e2e/mcp-client.test.ts.
 */
import {
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMcpUser,
  type McpServerUnderTest,
  type McpUser,
  openMcpServer,
} from '../support/mcp.js';
import { callbackListener, HostStorage } from '../support/mcp-host.js';
import {
  approveInBrowser,
  expectHeraldTools,
  expectSevenAnswersAndARefusal,
  launchChromium,
  type SeededBatches,
  seedBatches,
  sevenCallsAndARefusal,
} from '../support/mcp-tool-answers.js';

const MODERN = '2026-07-28';
const CLIENT_NAME = 'Herald e2e 2026 host';

describe('a 2026-07-28-only MCP client', { timeout: 120_000 }, () => {
  let mcp: McpServerUnderTest;
  let user: McpUser;
  let seeded: SeededBatches;
  let browser: Browser;
  let callback: Awaited<ReturnType<typeof callbackListener>>;

  beforeAll(async () => {
    mcp = await openMcpServer();
    user = await createMcpUser(mcp.admin);
    seeded = await seedBatches(mcp, user);
    callback = await callbackListener();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    callback?.server.close();
    await mcp?.close();
  });

  const transportFor = (host: HostStorage) =>
    new StreamableHTTPClientTransport(new URL(mcp.resource), {
      authProvider: host as unknown as OAuthClientProvider,
    });
  const modernClient = () =>
    new Client(
      { name: 'herald-e2e-2026', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );

  it('signs in through the consent page, discovers 2026-07-28 and calls every tool', async () => {
    const host = new HostStorage(callback.url, CLIENT_NAME);
    await expect(modernClient().connect(transportFor(host))).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const authorizationUrl = host.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcp.resource);

    const page = await browser.newPage();
    const returned = callback.next();
    await approveInBrowser(page, authorizationUrl.toString(), user, CLIENT_NAME);
    const callbackUrl = await returned;
    await page.close();

    const transport = transportFor(host);
    await transport.finishAuth(callbackUrl.searchParams);
    const client = modernClient();
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getServerVersion()).toMatchObject({
      name: 'herald-reporting',
      description: expect.stringContaining('Read-only delivery reporting'),
    });

    const { tools } = await client.listTools();
    expectHeraldTools(tools);
    for (const tool of tools) expect(tool.icons?.[0]?.mimeType, tool.name).toBe('image/svg+xml');

    const results: Parameters<typeof expectSevenAnswersAndARefusal>[0] = [];
    for (const [name, args] of sevenCallsAndARefusal(seeded)) {
      results.push((await client.callTool({ name, arguments: args })) as (typeof results)[0]);
    }
    expectSevenAnswersAndARefusal(results, seeded);
    await client.close();
  });
});
