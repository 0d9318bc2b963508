/**
 * The MCP Inspector as a real client (scripts/install-mcp-clients.sh installs it beside the
 * project), each time with a person approving in Chromium on Herald's consent page, then
 * tools/list and all seven tools held to the TypeScript SDK test's answers:
 * - the 2.x CLI with its own OAuth (loopback callback), in both protocol eras;
 * - the 1.x web UI in "Direct" mode, where the browser itself calls Herald's discovery,
 *   registration, token and /mcp endpoints, so it passes only with Herald's CORS;
 * - the 2.x web UI (2026-07-28 era), whose backend makes those calls (2.x has no Direct mode).
 */
import { spawn } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  inspectorCli,
  inspectorV1WebServer,
  node22,
  startInspectorWeb,
} from '../support/inspector.js';
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
  signInAndApprove,
} from '../support/mcp-tool-answers.js';
import { freePorts } from '../support/processes.js';

describe('the MCP Inspector connects with OAuth through a real browser', {
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

  it('CLI: signs in with its own OAuth, lists the tools in both eras and calls all seven', async () => {
    const [callbackPort] = (await freePorts(1)) as [number];
    const callbackUrl = `http://127.0.0.1:${callbackPort}/oauth/callback`;
    const cli = await inspectorCli(mcp.resource, callbackUrl);

    // Unauthenticated and told never to sign in: the CLI's "server requires authentication" exit.
    const refused = await cli.run(['--method', 'tools/list', '--stored-auth-only']);
    expect(refused.code, refused.stderr).toBe(3);

    let consent: Promise<void> | undefined;
    const signedIn = await cli.run(['--method', 'tools/list'], (line) => {
      const authorizationUrl = /Please navigate to: (\S+)/.exec(line)?.[1];
      if (!authorizationUrl || consent) return;
      consent = (async () => {
        const url = new URL(authorizationUrl);
        expect(url.origin + url.pathname).toBe(`${mcp.baseUrl}/oauth/authorize`);
        expect(url.searchParams.get('redirect_uri')).toBe(callbackUrl);
        expect(url.searchParams.get('resource')).toBe(mcp.resource);
        const page = await browser.newPage();
        await approveInBrowser(page, authorizationUrl, user, 'MCP Inspector');
        await page.waitForURL((landed) => landed.href.startsWith(callbackUrl));
        await page.close();
      })();
    });
    await consent;
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expectHeraldTools(JSON.parse(signedIn.stdout).result.tools);

    // From here on the token it stored is used; it must not need the person again.
    const negotiated = async (era: string) => {
      const probe = await cli.run([
        '--method',
        'initialize',
        '--stored-auth-only',
        ...eraFlag(era),
      ]);
      expect(probe.code, probe.stderr).toBe(0);
      return JSON.parse(probe.stdout).result.protocolVersion;
    };
    await expect(negotiated('legacy')).resolves.toBe('2025-11-25');
    await expect(negotiated('modern')).resolves.toBe('2026-07-28');
    const modern = await cli.run([
      '--method',
      'tools/list',
      '--stored-auth-only',
      ...eraFlag('modern'),
    ]);
    expect(modern.code, modern.stderr).toBe(0);
    expectHeraldTools(JSON.parse(modern.stdout).result.tools);

    const results = [];
    for (const [name, args] of sevenCallsAndARefusal(seeded)) {
      const call = await cli.run([
        '--method',
        'tools/call',
        '--tool-name',
        name,
        '--tool-args-json',
        JSON.stringify(args),
        '--stored-auth-only',
        ...eraFlag('modern'),
      ]);
      // 5 is the CLI's exit for a result with isError.
      expect(call.code, call.stderr).toBe(JSON.parse(call.stdout).result.isError ? 5 : 0);
      results.push(JSON.parse(call.stdout).result);
    }
    expectSevenAnswersAndARefusal(results, seeded);
  });

  it('web UI 1.x, Direct (the browser calls Herald): signs in, lists the tools and calls all seven', async () => {
    const [uiPort] = (await freePorts(1)) as [number];
    const ui = spawn(node22, [inspectorV1WebServer], {
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        CLIENT_PORT: String(uiPort),
        MCP_AUTO_OPEN_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve) => ui.stdout.once('data', () => resolve()));
      const uiOrigin = `http://127.0.0.1:${uiPort}`;
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      // The Inspector's remembered choices: the Direct connection, its v1 banner dismissed.
      await page.addInitScript({
        content: `localStorage.setItem('lastConnectionType', 'direct');
          localStorage.setItem('mcp-inspector-v1-deprecation-dismissed', 'true');`,
      });
      // What the browser itself got from Herald's /mcp (JSON-RPC over fetch) for `method`.
      const answerTo = (method: string) =>
        page
          .waitForResponse(
            (response) =>
              response.url() === mcp.resource &&
              response.request().method() === 'POST' &&
              response.request().postDataJSON()?.method === method,
          )
          .then((response) => response.json());
      await page.goto(
        `${uiOrigin}/?transport=streamable-http&serverUrl=${encodeURIComponent(mcp.resource)}`,
      );
      await page.getByRole('button', { name: 'Connect' }).click();
      // The Inspector sends the whole tab to Herald's sign-in page.
      await page.getByLabel('Email').waitFor();
      expect(page.url().startsWith(`${mcp.baseUrl}/oauth/authorize?`), page.url()).toBe(true);
      await signInAndApprove(page, user, 'MCP Inspector');
      await page.getByText('Connected', { exact: true }).waitFor();
      // Back in the Inspector, which made the connection itself.
      expect(page.url().startsWith(`${uiOrigin}/`), page.url()).toBe(true);

      const listing = answerTo('tools/list');
      await page.getByRole('button', { name: 'List Tools' }).click();
      const listed = (await listing).result as { tools: { name: string; title: string }[] };
      expectHeraldTools(listed.tools);
      const titleOf = new Map(listed.tools.map((tool) => [tool.name, tool.title]));

      /** Picks the tool, types its arguments into the form, runs it; the answer the browser got. */
      const runToolInTheUi = async (title: string, args: Record<string, unknown>) => {
        // The list's entry (the selected tool's heading repeats its title).
        await page.getByText(title, { exact: true }).first().click();
        for (const [argument, value] of Object.entries(args)) {
          await page.getByLabel(argument).fill(String(value));
        }
        const answered = answerTo('tools/call');
        await page.getByRole('button', { name: 'Run Tool' }).click();
        const { result } = await answered;
        expect(result).toBeDefined();
        await page.getByText(`Tool Result: ${result.isError ? 'Error' : 'Success'}`).waitFor();
        return result;
      };

      const results = [];
      for (const [name, args] of sevenCallsAndARefusal(seeded)) {
        results.push(await runToolInTheUi(titleOf.get(name) as string, args));
      }
      expectSevenAnswersAndARefusal(results, seeded);

      if (process.env.SAVE_INSPECTOR_SCREENSHOT) {
        // For the README: Herald's tools in the 1.x Inspector, Direct, one of them run (rerun
        // the file with SAVE_INSPECTOR_SCREENSHOT=1 to refresh docs/images/inspector-*.png).
        // Tall enough for the tool list and the result's structured content side by side.
        await page.setViewportSize({ width: 1440, height: 1800 });
        await runToolInTheUi('Team statistics', {});
        await page.getByText('List recent campaigns', { exact: true }).scrollIntoViewIfNeeded();
        await page.screenshot({
          path: 'docs/images/inspector-web-ui-direct.png',
          clip: { x: 0, y: 0, width: 1440, height: 1160 },
        });
      }
    } finally {
      ui.kill();
    }
  });

  it('web UI 2.x (its backend calls Herald): signs in, lists the tools and calls all seven', async () => {
    const [uiPort] = (await freePorts(1)) as [number];
    const ui = await startInspectorWeb(mcp.resource, uiPort, 'modern');
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      await page.goto(ui.url);
      await page.getByRole('switch').first().click({ force: true });
      // Connecting sends the whole tab to Herald's sign-in page.
      await page.getByLabel('Email').waitFor();
      const authorizationUrl = new URL(page.url());
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(
        `${mcp.baseUrl}/oauth/authorize`,
      );
      expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${ui.origin}/oauth/callback`);
      await signInAndApprove(page, user, 'MCP Inspector');
      await page.getByText('MCP 2026-07-28').waitFor();

      await page.getByText('Tools', { exact: true }).first().click();
      await page.getByText('Tools (7)').waitFor();
      const listedNames = await page.getByText(/^(get|list)_[a-z_]+$/).allInnerTexts();
      expectHeraldTools(listedNames.map((name) => ({ name, annotations: { readOnlyHint: true } })));

      const results = [];
      for (const [index, [name, args]] of sevenCallsAndARefusal(seeded).entries()) {
        // The list's entry (the message log names called tools too).
        await page.getByText(name, { exact: true }).first().click();
        for (const [argument, value] of Object.entries(args)) {
          await page.getByLabel(argument).fill(String(value));
        }
        await page.getByRole('button', { name: 'Execute Tool' }).click();
        // Its message log gains this call once answered; then the result panel shows it.
        await expect.poll(() => page.getByText(/^tools\/call$/i).count()).toBe(index + 1);
        const failed = page.getByText('Tool Error', { exact: true });
        // The editor of the "Structured Output" card.
        const structured = page
          .getByText('Structured Output', { exact: true })
          .locator('xpath=ancestor::div[.//div[contains(@class, "ace_editor")]][1]')
          .locator('.ace_editor');
        await failed.or(structured).first().waitFor();
        if (await failed.isVisible()) {
          results.push({ isError: true });
        } else {
          // Ace keeps the editor on its element: the whole text, not only the rows drawn.
          const text = await structured.evaluate((element) =>
            (element as unknown as AceElement).env.editor.getValue(),
          );
          results.push({ structuredContent: JSON.parse(text) });
        }
      }
      expectSevenAnswersAndARefusal(results, seeded);

      if (process.env.SAVE_INSPECTOR_SCREENSHOT) {
        // For the README: Herald's seven tools in today's Inspector, one of them run.
        await page.getByText('get_campaign_report', { exact: true }).first().click();
        await page.getByLabel('campaign_id').fill(String(seeded.campaignId));
        await page.getByRole('button', { name: 'Execute Tool' }).click();
        await expect.poll(() => page.getByText(/^tools\/call$/i).count()).toBe(9);
        await page.getByText('Structured Output', { exact: true }).waitFor();
        await page.getByText('Authorization complete').waitFor({ state: 'hidden' });
        await page.screenshot({ path: 'docs/images/inspector-web-ui.png' });
      }
    } finally {
      ui.close();
    }
  });
});

/** The CLI speaks 2025 (initialize) unless asked for 2026-07-28 (server/discover, no session). */
const eraFlag = (era: string) => ['--protocol-era', era];

interface AceElement {
  env: { editor: { getValue(): string } };
}
