/**
 * The Python MCP SDK as a real host: the 2.x line and the 1.x line still widely deployed, each in
 * its own venv (scripts/install-mcp-clients.sh), each signing in with the SDK's own OAuth client
 * provider and a person approving in Chromium, then listing and calling all seven tools.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMcpUser,
  type McpServerUnderTest,
  type McpUser,
  openMcpServer,
} from '../support/mcp.js';
import {
  approveInBrowser,
  expectHeraldTools,
  expectSevenAnswersAndARefusal,
  launchChromium,
  type SeededBatches,
  seedBatches,
  sevenCallsAndARefusal,
} from '../support/mcp-tool-answers.js';

interface Done {
  sdkVersion: string;
  protocolVersion: string;
  tools: { name: string; annotations?: { readOnlyHint?: boolean } }[];
  calls: { isError?: boolean; content?: unknown; structuredContent?: Record<string, unknown> }[];
}

/**
 * Runs test/support/mcp_python_client.py in `venv`; when it asks for the person's consent
 * (`authorize`), `consent(url)` gives it in the browser. Resolves with its `done` report.
 */
function runPythonHost(
  venv: string,
  args: string[],
  consent: (authorizationUrl: string) => Promise<void>,
): Promise<{ done: Done; authorizeEvents: number }> {
  const child = spawn(`.tools/${venv}/bin/python`, ['test/support/mcp_python_client.py', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  let authorizeEvents = 0;
  let done: Done | undefined;
  let consentFailure: unknown;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as { event: string; url?: string } & Done;
    if (event.event === 'authorize') {
      authorizeEvents += 1;
      consent(event.url as string).catch((error) => {
        consentFailure = error;
        child.kill();
      });
    }
    if (event.event === 'done') done = event;
  });
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      if (consentFailure) reject(consentFailure);
      else if (code !== 0 || !done) reject(new Error(`${venv} client exited ${code}:\n${stderr}`));
      else resolve({ done, authorizeEvents });
    });
  });
}

describe('the Python MCP SDK connects with OAuth through a real browser', {
  timeout: 120_000,
}, () => {
  let mcp: McpServerUnderTest;
  let user: McpUser;
  let seeded: SeededBatches;
  let browser: Browser;

  beforeAll(async () => {
    mcp = await openMcpServer();
    user = await createMcpUser(mcp.admin);
    seeded = await seedBatches(mcp, user);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await mcp?.close();
  });

  const connectAndCallEverything = async (venv: string, mode?: string) => {
    const consentPages: string[] = [];
    const result = await runPythonHost(
      venv,
      [mcp.resource, JSON.stringify(sevenCallsAndARefusal(seeded)), ...(mode ? [mode] : [])],
      async (authorizationUrl) => {
        const url = new URL(authorizationUrl);
        expect(url.origin + url.pathname).toBe(`${mcp.baseUrl}/oauth/authorize`);
        expect(url.searchParams.get('code_challenge_method')).toBe('S256');
        expect(url.searchParams.get('resource')).toBe(mcp.resource);
        const page = await browser.newPage();
        const sdkVersion = venv === 'mcp-python-2' ? '2.3.0' : '1.30.0';
        await approveInBrowser(page, authorizationUrl, user, `Python MCP SDK ${sdkVersion}`);
        await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
        consentPages.push(await page.locator('body').innerText());
        await page.close();
      },
    );
    expect(result.authorizeEvents).toBe(1);
    // The browser ended on the SDK's own loopback listener, which answered it.
    expect(consentPages).toEqual(['You can close this window.']);
    expectHeraldTools(result.done.tools);
    expectSevenAnswersAndARefusal(result.done.calls, seeded);
    return result.done;
  };

  it('2.3.0 signs in, lists the tools and calls all seven', async () => {
    const done = await connectAndCallEverything('mcp-python-2');
    expect(done.sdkVersion).toBe('2.3.0');
    // 'auto': the 2.x SDK probes server/discover first and takes the 2026 era when answered.
    expect(done.protocolVersion).toBe('2026-07-28');
  });

  it('1.30.0 (the last 1.x) signs in, lists the tools and calls all seven', async () => {
    const done = await connectAndCallEverything('mcp-python-1');
    expect(done.sdkVersion).toBe('1.30.0');
    expect(done.protocolVersion).toBe('2025-11-25');
  });
});
