/**
 * The Opt-outs page and the webhook tools in Chromium: an owner undoes an opt-out (after the
 * confirmation), rotates an endpoint's signing secret (the new one shown once) and replays a
 * delivery that failed, which the receiver then takes with the same body. No page breaks its
 * Content Security Policy.
 */
import { randomBytes } from 'node:crypto';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { sendTestWebhookEvent } from '../../commands/webhooks/webhook-tools.js';
import { createWebhookEndpoint } from '../../commands/webhooks/webhooks.js';
import { optOut } from '../../db/opt-outs.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { freshAddress, openConsoleApp } from '../support/console.js';
import { freePorts } from '../support/processes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const PASSWORD = 'correct horse 1';
let server: Awaited<ReturnType<typeof openConsoleApp>>;
let receiver: WebhookReceiver;
let baseUrl: string;
let browser: Browser;
const policyViolations: string[] = [];

beforeAll(async () => {
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  server = await openConsoleApp({
    PUBLIC_URL: baseUrl,
    TRUSTED_PROXIES: '127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  await server.app.listen({ host: '127.0.0.1', port });
  receiver = await startWebhookReceiver();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

async function signedIn(email: string): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1366, height: 860 },
    extraHTTPHeaders: { 'x-forwarded-for': freshAddress() },
  });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text()))
      policyViolations.push(message.text());
  });
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL(/\/console\/w\//), page.click('button[type="submit"]')]);
  return page;
}

describe('Opt-outs and webhook tools in the console', () => {
  it('undoes an opt-out, rotates a webhook secret and replays a failed delivery', async () => {
    const slug = `e-${randomBytes(5).toString('hex')}`;
    const workspace = await createWorkspace(server.deps, { name: 'Tools', slug }, TEST_OPERATOR);
    const email = `owner@${slug}.test`;
    await addUser(
      server.deps,
      { workspace: slug, email, password: PASSWORD, role: 'owner' },
      TEST_OPERATOR,
    );
    await optOut(server.sql, workspace.id, '+61412555011', 'reply');
    const path = `/tools-${slug}`;
    // The first attempt and its retry 5 s later fail; the next retry is 5 min away.
    receiver.plan(path, [500, 500]);
    const { endpoint } = await createWebhookEndpoint(
      server.deps,
      { workspace: slug, url: `${receiver.url}${path}`, events: ['campaign.completed'] },
      TEST_OPERATOR,
    );
    await sendTestWebhookEvent(server.deps, { id: endpoint.id }, TEST_OPERATOR);
    const [failed] = await receiver.waitFor(path, 1);

    const page = await signedIn(email);
    await page.click('nav a[href$="/opt-outs"]:visible');
    await expect(page.locator('#opt-outs td.mono').allTextContents()).resolves.toEqual([
      '+61412555011',
    ]);
    await Promise.all([
      page.waitForURL(/done=undone/),
      page.click('#opt-outs button:text("Undo")'),
    ]);
    await expect(page.locator('.alert.success').textContent()).resolves.toContain('Undone');
    await expect(page.locator('#opt-outs').count()).resolves.toBe(0);

    await page.click('nav a[href$="/developer/webhooks"]:visible');
    await page.click(`a:text("${receiver.url}${path}")`);
    await page.selectOption('#overlap-hours', '24');
    await Promise.all([page.waitForLoadState(), page.click('#webhook-rotate button')]);
    await page.waitForSelector('#rotated');
    await expect(page.locator('#webhook-secret').textContent()).resolves.toMatch(/^whsec_/);

    await receiver.waitFor(path, 2);
    await page.goto(`${baseUrl}/console/w/${slug}/developer/webhooks/${endpoint.id}`);
    await Promise.all([
      page.waitForURL(/done=replayed/),
      page.click('#webhook-attempts button:text("Replay")'),
    ]);
    const replayed = (await receiver.waitFor(path, 3))[2];
    expect(replayed?.body).toBe(failed?.body);
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('#webhook-attempts .badge:text("replay")').count();
      })
      .toBeGreaterThan(0);
    expect(policyViolations).toEqual([]);
  });
});
