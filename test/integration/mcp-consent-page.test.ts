/**
 * The OAuth consent page (issue 29 item 5): every fact a person needs before approving — the
 * workspace, who is signed in, the client's self-declared name, its own website, when it
 * registered, the exact callback (marked when it leaves this computer), the scope in words — in
 * the console's style, and usable at phone width in Chromium.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpUser, type McpServerUnderTest, openMcpServer } from '../support/mcp.js';

const LOOPBACK_CALLBACK = 'http://127.0.0.1:9/callback';
const REMOTE_CALLBACK = 'https://client.example/oauth/callback';
const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url);
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };

let server: McpServerUnderTest;

beforeAll(async () => {
  // Registrations are limited per client address: this file's come from addresses of its own.
  server = await openMcpServer({ TRUSTED_PROXIES: '127.0.0.1' });
});
afterAll(() => server.close());

/** An address of the benchmarking range (RFC 2544), which no other test file draws from. */
const address = () => `198.18.${randomInt(256)}.${randomInt(1, 255)}`;

interface Registration {
  client_name: string;
  redirect_uris: string[];
  client_uri?: string;
}

/** Registers a client and returns the URL of its authorization request. */
async function authorizationUrl(registration: Registration): Promise<string> {
  const registered = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address() },
    body: JSON.stringify(registration),
  });
  expect(registered.status).toBe(201);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const url = new URL(`${server.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: registration.redirect_uris[0] as string,
    code_challenge: randomBytes(32).toString('base64url').slice(0, 43),
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    state: 'consent-page',
  }).toString();
  return url.toString();
}

/** The page the sign-in answers with: the consent page for a member of one workspace. */
async function consentPage(
  registration: Registration,
  user: { email: string; password: string },
  beforeSignIn?: (clientId: string) => Promise<void>,
): Promise<string> {
  const url = await authorizationUrl(registration);
  await beforeSignIn?.(new URL(url).searchParams.get('client_id') as string);
  const start = await fetch(url);
  expect(start.status).toBe(200);
  const request = /name="request" value="([^"]+)"/.exec(await start.text())?.[1] as string;
  const signedIn = await fetch(`${server.baseUrl}/oauth/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request, email: user.email, password: user.password }),
  });
  expect(signedIn.status).toBe(200);
  return signedIn.text();
}

describe('the consent page', () => {
  it('shows the workspace, the user, the self-declared name, the website, the registration time, the exact callback and the scope in words', async () => {
    const user = await createMcpUser(server.admin);
    let registeredAt = new Date(0);
    const html = await consentPage(
      {
        client_name: 'Reporting Bot',
        redirect_uris: [REMOTE_CALLBACK],
        client_uri: 'https://bot.example/about',
      },
      user,
      async (clientId) => {
        // Registered 3 minutes and a few seconds ago.
        const [row] = await server.sql<{ createdAt: Date }[]>`
          update oauth_clients set created_at = now() - interval '3 minutes 10 seconds'
          where id = ${clientId} returning created_at`;
        registeredAt = row?.createdAt as Date;
      },
    );
    const minute = `${registeredAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

    expect(html).toContain('<h1>Authorize Reporting Bot</h1>');
    expect(html).toContain(
      `<dt>Workspace</dt><dd><strong>${user.workspaceName}</strong> (<span class="mono">${user.workspaceSlug}</span>)</dd>`,
    );
    expect(html).toContain(`<dt>Signed in as</dt><dd><strong>${user.email}</strong></dd>`);
    expect(html).toContain(
      '<dt>Name</dt><dd>Calls itself <strong>“Reporting Bot”</strong>, a name it chose itself; Herald has not verified it.</dd>',
    );
    expect(html).toContain(
      '<dt>Website</dt><dd><span class="mono">https://bot.example/about</span> (given by the client; Herald has not verified it)</dd>',
    );
    expect(html).toContain(
      `<dt>Registered</dt><dd><time datetime="${registeredAt.toISOString()}">${minute}</time> (3 minutes ago)</dd>`,
    );
    expect(html).toContain(`<p class="box remote" id="callback">${REMOTE_CALLBACK}</p>`);
    expect(html).toContain(
      '<p class="alert warn" id="callback-note">This address is not on your computer: the client receives your access there. Approve only if you recognise it.</p>',
    );
    expect(html).toContain(
      '<li>Read reports: delivery counts of campaigns, Quick Sends and API sends, and team counts.</li>',
    );
    expect(html).toContain(
      '<li>Send messages, send or verify codes, or change settings.</li><li>See message text, phone numbers or codes.</li>',
    );
    expect(html).toContain(
      '<button type="submit" name="decision" value="approve">Approve</button>',
    );
    expect(html).toContain(
      '<button type="submit" name="decision" value="deny" class="secondary">Deny</button>',
    );
    // The console's stylesheet, inlined: the page works with the console off and no 'self' styles.
    expect(html).toContain('<body class="auth">');
    expect(html).toContain('--brand: #3b5bdb;');
  });

  it('says when a client gave no website, and marks a loopback callback as this computer', async () => {
    const user = await createMcpUser(server.admin);
    const html = await consentPage(
      { client_name: 'Local tool', redirect_uris: [LOOPBACK_CALLBACK] },
      user,
    );
    expect(html).toContain('<dt>Website</dt><dd>No website given.</dd>');
    expect(html).toContain('(less than a minute ago)</dd>');
    expect(html).toContain(`<p class="box" id="callback">${LOOPBACK_CALLBACK}</p>`);
    expect(html).toContain(
      '<p class="muted" id="callback-note">An address on this computer (loopback): the client runs on your machine.</p>',
    );
  });

  it('never shows a javascript: website as a link, and escapes what it shows', async () => {
    const user = await createMcpUser(server.admin);
    const hostile = await consentPage(
      {
        client_name: 'Sneaky <b>client</b>',
        redirect_uris: [LOOPBACK_CALLBACK],
        client_uri: 'javascript:alert(document.cookie)//"><a href="javascript:alert(1)">x</a>',
      },
      user,
    );
    expect(hostile).not.toContain('<a ');
    expect(hostile).not.toContain('href=');
    expect(hostile).not.toContain('javascript:');
    expect(hostile).toContain(
      '<dt>Website</dt><dd>None Herald shows: what it gave is not an https address.</dd>',
    );
    expect(hostile).toContain('Calls itself <strong>“Sneaky &lt;b&gt;client&lt;/b&gt;”</strong>');

    const escaped = await consentPage(
      {
        client_name: 'Query client',
        redirect_uris: [LOOPBACK_CALLBACK],
        client_uri: 'https://bot.example/?q=<script>&x="y"',
      },
      user,
    );
    expect(escaped).not.toContain('<a ');
    expect(escaped).toContain(
      '<span class="mono">https://bot.example/?q=&lt;script&gt;&amp;x=&quot;y&quot;</span>',
    );
  });
});

describe('the consent page in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox'],
    });
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  afterAll(() => browser?.close());

  it('fits a 375 px phone without sideways scrolling, with both buttons visible and 44 px tall', async () => {
    const user = await createMcpUser(server.admin);
    const url = await authorizationUrl({
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      client_uri: 'https://claude.ai',
    });
    const page = await browser.newPage({ viewport: PHONE });
    await page.goto(url);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Authorize Claude' }).waitFor();

    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      PHONE.width,
    );
    for (const name of ['Approve', 'Deny']) {
      const button = page.getByRole('button', { name });
      await button.scrollIntoViewIfNeeded();
      expect(await button.isVisible()).toBe(true);
      const box = await button.boundingBox();
      expect(box?.height).toBeGreaterThanOrEqual(44);
      expect((box?.x ?? -1) >= 0 && (box?.x ?? 0) + (box?.width ?? 0) <= PHONE.width).toBe(true);
    }
    // The console's look: its stylesheet applies (the card on the dark background).
    expect(
      await page.evaluate("getComputedStyle(document.querySelector('main')).borderRadius"),
    ).toBe('8px');
    await page.screenshot({
      path: new URL('mcp-consent-phone.png', SCREENSHOTS).pathname,
      fullPage: true,
    });
    await page.setViewportSize(DESKTOP);
    await page.screenshot({
      path: new URL('mcp-consent-desktop.png', SCREENSHOTS).pathname,
      fullPage: true,
    });
    await page.close();
  });
});
