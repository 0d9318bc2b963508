/**
 * The console in Chromium (playwright-core, as the MCP e2e test drives it): a new owner accepts
 * an invitation, creates an API key and sends with it over REST, Quick Sends 50 recipients and
 * watches the counters reach completed, reads the audit log, revokes the key after confirming,
 * enrols TOTP and signs in with it;
 * a viewer invited next sees no Developer Tools. No page breaks its Content Security Policy.
 * Screenshots of each page at desktop and phone width go to docs/screenshots/.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { Secret, TOTP } from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvitation } from '../../commands/invitations.js';
import { addUser } from '../../commands/users.js';
import { createWorkspace } from '../../commands/workspaces.js';
import { openConsoleApp } from '../support/console.js';

const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url);
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let baseUrl: string;
let browser: Browser;
const policyViolations: string[] = [];

beforeAll(async () => {
  server = await openConsoleApp();
  baseUrl = await server.listen();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  await mkdir(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: DESKTOP });
  context.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text()))
      policyViolations.push(message.text());
  });
  return context;
}

/** The page at desktop width, then at phone width, then back. */
async function screenshots(page: Page, name: string) {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({
    path: new URL(`console-${name}-desktop.png`, SCREENSHOTS).pathname,
    fullPage: true,
  });
  await page.setViewportSize(PHONE);
  await page.screenshot({
    path: new URL(`console-${name}-phone.png`, SCREENSHOTS).pathname,
    fullPage: true,
  });
  await page.setViewportSize(DESKTOP);
}

function numbers(count: number): string[] {
  const chosen = new Set<string>();
  while (chosen.size < count) chosen.add(`+6146${String(randomInt(10_000_000)).padStart(7, '0')}`);
  return [...chosen];
}

describe('the console in a browser', () => {
  const slug = `e-${randomBytes(5).toString('hex')}`;
  const ownerEmail = `founder@${slug}.test`;
  const password = 'a long owner password';
  let page: Page;

  it('accepts an invitation by choosing a password and lands on the dashboard', async () => {
    await createWorkspace(server.deps, { name: 'Acme Logistics', slug });
    await addUser(server.deps, {
      workspace: slug,
      email: `ops@${slug}.test`,
      password: 'operator pw 1',
      role: 'owner',
    });
    const { token } = await createInvitation(server.deps, {
      workspace: slug,
      email: ownerEmail,
      role: 'owner',
    });
    const context = await newContext();
    page = await context.newPage();
    await page.goto(`${baseUrl}/console/invitations/${token}`);
    await expect(
      page.getByRole('heading', { name: 'Join Acme Logistics' }).isVisible(),
    ).resolves.toBe(true);
    await screenshots(page, 'invitation');
    await page.getByLabel('Choose a password').fill(password);
    await page.getByLabel('Repeat the password').fill('something else');
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await expect(
      page.getByText('The repeated password does not match the password').isVisible(),
    ).resolves.toBe(true);
    await page.getByLabel('Choose a password').fill(password);
    await page.getByLabel('Repeat the password').fill(password);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}`);
    await expect(page.getByRole('heading', { name: 'Dashboard' }).isVisible()).resolves.toBe(true);
  });

  let token = '';

  it('creates an API key (token shown once) that sends over REST', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await expect(page.getByText('No API keys yet').isVisible()).resolves.toBe(true);
    await page.locator('#name').fill('Billing backend');
    await page.getByRole('button', { name: 'Create key' }).click();
    token = (await page.locator('#new-token').textContent())?.trim() ?? '';
    expect(token).toMatch(/^hld_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    await screenshots(page, 'api-keys');
    const sent = await fetch(`${baseUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients: numbers(1), message: 'Sent with a console key.' }),
    });
    expect(sent.status).toBe(202);
    // Shown once: a reload lists the prefix only.
    await page.goto(`${baseUrl}/console/w/${slug}/developer/api-keys`);
    expect(await page.locator('#new-token').count()).toBe(0);
    await expect(page.getByText(token.slice(0, 12)).first().isVisible()).resolves.toBe(true);
  });

  it('Quick Sends 50 recipients and watches the counters reach completed', async () => {
    await page.getByRole('link', { name: 'Quick Send' }).click();
    await page.getByLabel('Recipients', { exact: true }).fill(numbers(50).join('\n'));
    await page.locator('#recipient-count', { hasText: '50 recipients entered' }).waitFor();
    await page.getByLabel('Message', { exact: true }).pressSequentially('Your order ships today €');
    // The counter is the server's (domain/segments.ts), asked for by htmx as the text changes.
    await page.locator('#message-measure', { hasText: '24 / 1,600 characters' }).waitFor();
    await expect(page.locator('#message-measure').textContent()).resolves.toMatch(
      /Encoding\s+GSM-7\s+1\s+segment per recipient/,
    );
    await page.locator('#reference').fill('Shipping notice');
    await screenshots(page, 'quick-send');
    await page.getByRole('button', { name: 'Send now' }).click();
    await page.waitForURL(/\/batches\/\d+$/);
    await page.locator('#batch-status', { hasText: 'completed' }).waitFor({ timeout: 60_000 });
    await expect(page.locator('#count-sent').textContent()).resolves.toBe('50');
    await expect(page.locator('#count-failed').textContent()).resolves.toBe('0');
    await screenshots(page, 'batch');
    const id = Number(/\/batches\/(\d+)$/.exec(page.url())?.[1]);
    const [batch] = await server.sql<
      { source: string }[]
    >`select source from report_batches where campaign_id = ${id}`;
    expect(batch?.source).toBe('quick_send');
  });

  it('shows the dashboard with its chart and the audit log', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.locator('.chart canvas').waitFor();
    await expect(page.locator('#recent-batches').textContent()).resolves.toContain(
      'Shipping notice',
    );
    await screenshots(page, 'dashboard');
    await page.getByRole('link', { name: 'Audit log' }).click();
    const log = (await page.locator('main').textContent()) ?? '';
    for (const action of ['invitation.accepted', 'api_key.created', 'quick_send.sent']) {
      expect(log).toContain(action);
    }
    await screenshots(page, 'audit');
  });

  it('revokes the key after a confirmation, and REST refuses it', async () => {
    await page.goto(`${baseUrl}/console/w/${slug}/developer/api-keys`);
    page.once('dialog', (dialog) => dialog.dismiss());
    await page.getByRole('button', { name: 'Revoke' }).click();
    await expect(page.getByText('Active').first().isVisible()).resolves.toBe(true);
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('The API key was revoked.').waitFor();
    const refused = await fetch(`${baseUrl}/api/v1/messages/1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(401);
  });

  it('invites a viewer from Team, who sees reports but no Developer Tools', async () => {
    const viewerEmail = `viewer@${slug}.test`;
    await page.getByRole('link', { name: 'Team' }).click();
    await page.getByLabel('Email').fill(viewerEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = (await page.locator('#invitation-link').textContent())?.trim() ?? '';
    expect(link).toMatch(/\/console\/invitations\/hli_/);
    await screenshots(page, 'team');
    const context = await newContext();
    const viewer = await context.newPage();
    // The link is built on PUBLIC_URL (herald.test here); the server listens on baseUrl.
    await viewer.goto(`${baseUrl}${new URL(link).pathname}`);
    await viewer.getByLabel('Choose a password').fill('viewer password');
    await viewer.getByLabel('Repeat the password').fill('viewer password');
    await viewer.getByRole('button', { name: 'Create account and join' }).click();
    await viewer.waitForURL(`${baseUrl}/console/w/${slug}`);
    expect(await viewer.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    const refused = await viewer.goto(`${baseUrl}/console/w/${slug}/developer/api-keys`);
    expect(refused?.status()).toBe(403);
    await expect(viewer.getByRole('heading', { name: 'Not allowed' }).isVisible()).resolves.toBe(
      true,
    );
    await context.close();
  });

  let totpSecret = '';
  const codeFor = (stepsAhead: number) =>
    new TOTP({
      secret: Secret.fromBase32(totpSecret),
      digits: 6,
      period: 30,
      algorithm: 'SHA1',
    }).generate({
      timestamp: Date.now() + stepsAhead * 30_000,
    });

  it('enrols TOTP from the profile', async () => {
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    totpSecret = (await page.locator('#totp-secret').textContent())?.trim() ?? '';
    expect(totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    await screenshots(page, 'profile');
    await page.getByLabel('Code from the app').fill(codeFor(0));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('Two-step verification is on.').first().waitFor();
  });

  it('signs out, and signs in again with the password and a TOTP code', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${baseUrl}/console/sign-in?signed_out=1`);
    await screenshots(page, 'sign-in');
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${baseUrl}/console/sign-in/code`);
    await page.getByLabel('Verification code').fill(codeFor(1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}`);
    expect(policyViolations).toEqual([]);
  });
});
