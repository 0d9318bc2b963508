/**
 * Providers and failover routes in Chromium (playwright-core, as console-journey drives it): an
 * admin adds a Twilio provider pointed at a Twilio-format server (test/support/twilio-peer.ts),
 * tests its connection, builds a failover route with it first (Up/Down buttons, no script
 * needed), creates an API key routed to that route and sends over REST: the Twilio-format server
 * counts the message. No page breaks its Content Security Policy, and none shows the auth token.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { freshAddress, openConsoleApp } from '../support/console.js';
import { freePorts } from '../support/processes.js';
import { startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';

const ACCOUNT_SID = `AC${'a1b2c3d4e5f60718'.repeat(2)}`;
const AUTH_TOKEN = `tok-${randomBytes(8).toString('hex')}`;
const PASSWORD = 'an admin password 1';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let baseUrl: string;
let browser: Browser;
let peer: TwilioPeer;
const policyViolations: string[] = [];

beforeAll(async () => {
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  server = await openConsoleApp({ PUBLIC_URL: baseUrl, TRUSTED_PROXIES: '127.0.0.1' });
  await server.app.listen({ host: '127.0.0.1', port });
  peer = await startTwilioPeer({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
});

afterAll(async () => {
  await browser?.close();
  await peer?.close();
  await server?.close();
});

describe('providers and failover routes in a browser', () => {
  const slug = `r-${randomBytes(5).toString('hex')}`;
  const email = `admin@${slug}.test`;
  let page: Page;
  const seen: string[] = [];

  it('signs in an admin', async () => {
    await createWorkspace(server.deps, { name: 'Route Co', slug }, TEST_OPERATOR);
    await addUser(
      server.deps,
      { workspace: slug, email, password: PASSWORD, role: 'admin' },
      TEST_OPERATOR,
    );
    const context = await browser.newContext({
      viewport: { width: 1366, height: 860 },
      extraHTTPHeaders: { 'x-forwarded-for': freshAddress() },
    });
    context.setDefaultTimeout(30_000);
    context.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text()))
        policyViolations.push(message.text());
    });
    page = await context.newPage();
    page.on('load', async () => seen.push(await page.content().catch(() => '')));
    await page.goto(`${baseUrl}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}`);
  });

  it('adds a Twilio provider and tests its connection', async () => {
    await page.getByRole('link', { name: 'Providers', exact: true }).click();
    await expect(page.getByText('No providers of your own').isVisible()).resolves.toBe(true);
    await page.getByRole('link', { name: 'Add Twilio provider' }).click();
    await page.getByLabel('Slug').fill('twilio-main');
    await page.getByLabel('Name').fill('Twilio main');
    await page.getByLabel('Account SID').fill(ACCOUNT_SID);
    await page.getByLabel('Auth token').fill(AUTH_TOKEN);
    await page.getByLabel('From', { exact: false }).first().fill('+15005550006');
    await page.getByLabel('Base URL').fill(peer.url);
    await page.getByRole('button', { name: 'Add Twilio provider' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}/providers/twilio-main/edit?done=created`);
    await expect(page.getByLabel('Auth token').inputValue()).resolves.toBe('');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect(page.locator('#connection-result').textContent()).resolves.toContain(
      `Connection works: Twilio account ${ACCOUNT_SID} answered (status active).`,
    );
    expect(peer.accountFetches).toEqual([{ authorized: true }]);
  });

  it('builds a failover route with the provider first', async () => {
    await page.getByRole('link', { name: 'Failover routes' }).click();
    await page.getByRole('link', { name: 'New failover route' }).click();
    await page.getByLabel('Slug').fill('main');
    await page.getByLabel('Name').fill('Main route');
    await page.getByLabel('Provider to add').selectOption('own');
    await page.getByRole('button', { name: 'Add to the route' }).click();
    await page.getByLabel('Provider to add').selectOption('twilio-main');
    await page.getByRole('button', { name: 'Add to the route' }).click();
    await expect(page.locator('#route-providers li').allTextContents()).resolves.toEqual([
      expect.stringContaining('own'),
      expect.stringContaining('twilio-main'),
    ]);
    await page.getByRole('button', { name: 'Move twilio-main up' }).click();
    await expect(
      page
        .locator('#route-providers li')
        .evaluateAll((items) => items.map((item) => item.getAttribute('data-slug'))),
    ).resolves.toEqual(['twilio-main', 'own']);
    await page.getByRole('button', { name: 'Create route' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}/failover-routes?done=created`);
    await expect(page.getByText('The failover route was created.').isVisible()).resolves.toBe(true);
  });

  it('sends over REST with a key routed to the route, and the Twilio-format server receives it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.locator('#name').fill('Routed backend');
    await page.locator('#routing').selectOption('route:main');
    await page.getByRole('button', { name: 'Create key' }).click();
    const token = (await page.locator('#new-token').textContent())?.trim() ?? '';
    expect(token).toMatch(/^hld_/);
    const to = `+6146${String(randomInt(10_000_000)).padStart(7, '0')}`;
    const sent = await fetch(`${baseUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients: [to], message: 'Routed through Twilio.' }),
    });
    expect(sent.status).toBe(202);
    const deadline = Date.now() + 30_000;
    while (peer.messages.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(peer.messages.map(({ to: number, body }) => ({ to: number, body }))).toEqual([
      { to, body: 'Routed through Twilio.' },
    ]);
    expect(peer.problems).toEqual([]);
  });

  it('broke no Content Security Policy and never showed the auth token', () => {
    expect(policyViolations).toEqual([]);
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.filter((html) => html.includes(AUTH_TOKEN))).toEqual([]);
  });
});
