/**
 * The console in Chromium (playwright-core, as the MCP e2e test drives it): a new owner accepts
 * an invitation, creates an API key and sends with it over REST, saves an OTP service and sends a
 * code with its slug (read at the simulator's phone, verified over REST), Quick Sends 50
 * recipients and watches the counters reach completed, reads the audit log, sets a tight range
 * breaker on Fraud guard and sees the block it trips as a banner until it unblocks the range,
 * revokes the key after confirming; a viewer invited next can create no key; the owner enrols TOTP, signs in with it,
 * requires it of the workspace, connects an MCP client (whose OAuth sign-in asks for the code)
 * and revokes it from MCP & AI, after which the client's next call is a 401. Then the refusals,
 * each with its exact answer: a form without its CSRF token, a session on another workspace's
 * pages, and the sign-in throttle. No page breaks its Content Security Policy.
 * Each page it opens is measured at 1366, 1024 and 390 px (nothing wider than the window) and
 * its screenshots at those widths go to docs/screenshots/.
 */
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Secret, TOTP } from 'otpauth';
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Page,
  type Response,
} from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits } from '../../commands/otp/credits.js';
import { createInvitation } from '../../commands/team/invitations.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { purposeKey } from '../../security/keys.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { freshAddress, openConsoleApp } from '../support/console.js';
import { overflowProblems, WIDTHS } from '../support/console-widths.js';
import { callbackListener, HostStorage } from '../support/mcp-host.js';
import { freePorts } from '../support/processes.js';

const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url);
const DESKTOP = { width: 1366, height: 860 };
const PHONE = { width: 390, height: 844 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let baseUrl: string;
let browser: Browser;
const policyViolations: string[] = [];

beforeAll(async () => {
  // PUBLIC_URL is where the browser and the MCP client reach the api: the OAuth issuer and the
  // /mcp resource are named by it. X-Forwarded-For from loopback is believed, so each browser
  // context signs in from an address of its own (the sign-in throttle counts per address).
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  server = await openConsoleApp({
    PUBLIC_URL: baseUrl,
    MCP_ENABLED: 'true',
    TRUSTED_PROXIES: '127.0.0.1',
  });
  await server.app.listen({ host: '127.0.0.1', port });
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

async function newContext(address = freshAddress()): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: DESKTOP,
    extraHTTPHeaders: { 'x-forwarded-for': address },
  });
  context.setDefaultTimeout(30_000);
  context.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text()))
      policyViolations.push(message.text());
  });
  return context;
}

/**
 * The page at 1366, 1024 and 390 px (docs/console.md): nothing wider than the window (wide
 * tables scroll inside their own container on a phone only), a screenshot of each; then back.
 */
async function screenshots(page: Page, name: string) {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === PHONE.width ? PHONE.height : 860 });
    await expect(page.evaluate('document.documentElement.scrollWidth')).resolves.toBe(width);
    await expect(overflowProblems(page), `${name} at ${width}px`).resolves.toEqual([]);
    await page.screenshot({
      path: new URL(`console-${name}-${width}.png`, SCREENSHOTS).pathname,
      fullPage: true,
    });
  }
  await page.setViewportSize(DESKTOP);
}

/** Clicks, and returns the server's answer to the form the click posts to `path`. */
async function submit(page: Page, path: string, click: () => Promise<void>): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse(
      (candidate) =>
        candidate.request().method() === 'POST' && new URL(candidate.url()).pathname === path,
    ),
    click(),
  ]);
  await page.waitForLoadState();
  return response;
}

/** A REST call with an API key, as a customer's backend makes it. */
function rest(path: string, token: string, body: unknown) {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** What the simulator's phone at `to` received, newest first. */
async function inboxOf(to: string): Promise<{ body: string }[]> {
  const response = await fetch(`${inject('simulatorUrl')}/v1/inbox?to=${encodeURIComponent(to)}`);
  return ((await response.json()) as { messages: { body: string }[] }).messages;
}

async function apiKeyCount(workspace: string): Promise<number> {
  const [row] = await server.sql<{ count: number }[]>`
    select count(*)::int as count from api_keys k join workspaces w on w.id = k.workspace_id
    where w.slug = ${workspace}`;
  return row?.count ?? -1;
}

async function connectMcp(host: HostStorage): Promise<Client> {
  const client = new Client({ name: 'herald-journey', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: host }),
  );
  return client;
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
    await createWorkspace(server.deps, { name: 'Acme Logistics', slug }, TEST_OPERATOR);
    await addUser(
      server.deps,
      {
        workspace: slug,
        email: `ops@${slug}.test`,
        password: 'operator pw 1',
        role: 'owner',
      },
      TEST_OPERATOR,
    );
    const { token } = await createInvitation(
      server.deps,
      {
        workspace: slug,
        email: ownerEmail,
        role: 'owner',
      },
      TEST_OPERATOR,
    );
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
    // messages:send and messages:read are ticked already; the OTP step below needs these too.
    await page.getByLabel('otp:send').check();
    await page.getByLabel('otp:verify').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    token = (await page.locator('#new-token').textContent())?.trim() ?? '';
    expect(token).toMatch(/^hld_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    await expect(page.locator('#created-key').textContent()).resolves.toContain(
      'abilities messages:send, messages:read, otp:send, otp:verify',
    );
    await screenshots(page, 'api-keys');
    const sent = await rest('/api/v1/messages', token, {
      recipients: numbers(1),
      message: 'Sent with a console key.',
    });
    expect(sent.status).toBe(202);
    // Shown once: a reload lists the prefix only.
    await page.goto(`${baseUrl}/console/w/${slug}/developer/api-keys`);
    expect(await page.locator('#new-token').count()).toBe(0);
    await expect(page.getByText(token.slice(0, 12)).first().isVisible()).resolves.toBe(true);
  });

  it('creates an OTP service, sends a code with its slug over REST, and the code from the phone verifies', async () => {
    // The operator's top-up (`herald credits add`): OTP sends draw on prepaid credits.
    await addCredits(server.deps, { workspace: slug, amount: 10 }, TEST_OPERATOR);
    await page.getByRole('link', { name: 'OTP', exact: true }).click();
    await expect(page.getByText('No OTP services yet').isVisible()).resolves.toBe(true);
    await page.getByLabel('Name', { exact: true }).fill('Sign-in codes');
    await page.getByLabel('Purpose', { exact: true }).fill('login');
    // Not the defaults (6 digits, 5 minutes), so the send below shows the service was used.
    await page.getByLabel('Code length').fill('8');
    await page.getByLabel('Lifetime (minutes)').fill('3');
    await page.locator('#otp-message_template').fill('Your Acme Logistics code is {code}.');
    const created = await submit(page, `/console/w/${slug}/otp-services`, () =>
      page.getByRole('button', { name: 'Create service' }).click(),
    );
    expect(created.status()).toBe(201);
    const serviceSlug = (await page.locator('#new-service-slug').textContent())?.trim() ?? '';
    expect(serviceSlug).toMatch(UUID);
    await expect(page.locator('tbody').textContent()).resolves.toContain(serviceSlug);
    await screenshots(page, 'otp-services');

    const [recipient] = numbers(1) as [string];
    const sent = await rest('/api/v1/otp/send', token, { recipient, service_slug: serviceSlug });
    const answer = (await sent.json()) as { data: { request_id: string; expires_at: string } };
    expect({ status: sent.status, body: answer }).toEqual({
      status: 202,
      body: {
        message: 'Verification code sent.',
        data: {
          request_id: expect.stringMatching(UUID),
          status: 'accepted',
          expires_at: expect.any(String),
          provider: 'own',
          sender_id: null,
          billing: { source: 'credits', settlement_status: 'settled', credits_charged: 1 },
        },
      },
    });
    // The service's three-minute lifetime.
    const lifetime = Date.parse(answer.data.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(2 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(3 * 60_000);

    await expect
      .poll(async () => (await inboxOf(recipient)).length, { timeout: 30_000, interval: 200 })
      .toBe(1);
    const [message] = await inboxOf(recipient);
    const code = /^Your Acme Logistics code is (\d{8})\.$/.exec(message?.body ?? '')?.[1];
    expect(code, message?.body).toBeDefined();
    const verified = await rest('/api/v1/otp/verify', token, {
      recipient,
      code,
      request_id: answer.data.request_id,
    });
    expect({ status: verified.status, body: await verified.json() }).toEqual({
      status: 200,
      body: { message: 'The code is verified.' },
    });
  });

  let quickSendId = 0;

  // 50 sends through the shared worker: generous on a loaded machine, bounded all the same.
  it('Quick Sends 50 recipients and watches the counters reach completed', {
    timeout: 120_000,
  }, async () => {
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
    await page.locator('#batch-status', { hasText: 'completed' }).waitFor({ timeout: 90_000 });
    await expect(page.locator('#count-sent').textContent()).resolves.toBe('50');
    await expect(page.locator('#count-failed').textContent()).resolves.toBe('0');
    await screenshots(page, 'batch');
    quickSendId = Number(/\/batches\/(\d+)$/.exec(page.url())?.[1]);
    const [batch] = await server.sql<
      { source: string }[]
    >`select source from report_batches where campaign_id = ${quickSendId}`;
    expect(batch?.source).toBe('quick_send');
  });

  it('shows the dashboard with its chart and the audit log', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    // Issue 31: stacked daily bars drawn on the server (an SVG), not a uPlot canvas.
    await page.locator('#daily-chart svg').waitFor();
    await expect(page.locator('#recent-batches').textContent()).resolves.toContain(
      'Shipping notice',
    );
    await screenshots(page, 'dashboard');
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.locator('main', { hasText: 'Shipping notice' }).waitFor();
    await screenshots(page, 'campaigns');
    await page.getByRole('link', { name: 'Audit log' }).click();
    const log = (await page.locator('main').textContent()) ?? '';
    for (const action of [
      'invitation.accepted',
      'api_key.created',
      'otp_service.created',
      'quick_send.sent',
    ]) {
      expect(log).toContain(action);
    }
    await screenshots(page, 'audit');
  });

  it('sets a tight range breaker, whose block shows as a banner on every page until unblocked', async () => {
    await page.getByRole('link', { name: 'Fraud guard' }).click();
    await page.getByLabel('Range breaker').fill('3/1h@50%,1h');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('The fraud guard settings were saved.').waitFor();
    // +61474RR, then 4 digits: a range no other step or test file sends to.
    const range = `+61474${randomInt(10, 100)}`;
    const send = (number: number) =>
      rest('/api/v1/otp/send', token, { recipient: `${range}000${number}`, purpose: 'login' });
    for (let number = 1; number <= 3; number++) expect((await send(number)).status).toBe(202);
    expect((await send(4)).status).toBe(429);
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await expect(page.locator('#paused-ranges').textContent()).resolves.toContain(
      `Codes to numbers starting ${range} are paused until`,
    );
    await page.getByRole('link', { name: 'Review or unblock' }).click();
    await page.locator('.chart canvas').waitFor();
    await screenshots(page, 'fraud-guard');
    page.once('dialog', (dialog) => dialog.accept());
    const unblocked = await submit(page, `/console/w/${slug}/fraud-guard/unblock`, () =>
      page.getByRole('button', { name: 'Unblock' }).click(),
    );
    expect(unblocked.status()).toBe(303);
    await page.getByText('No number range is blocked.').waitFor();
    expect(await page.locator('#paused-ranges').count()).toBe(0);
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

  it('invites a viewer from Team, who sees reports but can create no key', async () => {
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
    expect(await viewer.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    // A forged form with the viewer's own valid CSRF token (the sign-out form's): the
    // permission is checked on the server, whatever the page offered.
    const csrf = await viewer.locator('input[name="_csrf"]').first().getAttribute('value');
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const keysBefore = await apiKeyCount(slug);
    const forged = await context.request.post(`${baseUrl}/console/w/${slug}/developer/api-keys`, {
      form: { _csrf: csrf ?? '', name: 'Forged', abilities: 'messages:send' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain(
      'This needs the developer_tools.read permission and the owner or admin or developer role in this workspace.',
    );
    expect(await apiKeyCount(slug)).toBe(keysBefore);
    await context.close();
  });

  let totpSecret = '';
  let lastStep = 0;
  /**
   * A code Herald takes now: each 30-second step is taken once, and a step one ahead of the
   * clock at most, so a second code within one step waits for the clock to move on.
   */
  const nextCode = async () => {
    const stepNow = () => Math.floor(Date.now() / 30_000);
    await expect
      .poll(() => stepNow() + 1 > lastStep, { timeout: 45_000, interval: 250 })
      .toBe(true);
    lastStep = Math.max(lastStep + 1, stepNow());
    return new TOTP({
      secret: Secret.fromBase32(totpSecret),
      digits: 6,
      period: 30,
      algorithm: 'SHA1',
    }).generate({ timestamp: lastStep * 30_000 });
  };

  it('enrols TOTP from the profile', async () => {
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    totpSecret = (await page.locator('#totp-secret').textContent())?.trim() ?? '';
    expect(totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    await screenshots(page, 'profile');
    await page.getByLabel('Code from the app').fill(await nextCode());
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
    await page.getByLabel('Verification code').fill(await nextCode());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}`);
  });

  it('requires two-step verification of every member of the workspace', async () => {
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('button', { name: 'Require two-step verification' }).click();
    await page.waitForURL(`${baseUrl}/console/profile?done=required`);
    await expect(page.locator('main').textContent()).resolves.toContain(
      'Every member of Acme Logistics must use two-step verification.',
    );
  });

  let host: HostStorage;
  let client: Client;

  // Up to one 30-second TOTP step of waiting for a fresh code, then the whole OAuth flow.
  it('connects an MCP client whose OAuth sign-in asks for the TOTP code, and calls a tool', {
    timeout: 120_000,
  }, async () => {
    const callback = await callbackListener();
    try {
      host = new HostStorage(callback.url, 'Herald journey host');
      // Discovery and dynamic client registration; the host is sent to authorize (PKCE S256).
      await expect(connectMcp(host)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(host.information?.client_id).toMatch(/^mcp_/);
      const authorizationUrl = host.authorizationUrl as URL;
      expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

      const context = await newContext();
      const consent = await context.newPage();
      const returned = callback.next();
      await consent.goto(authorizationUrl.toString());
      await consent.getByLabel('Email').fill(ownerEmail);
      await consent.getByLabel('Password').fill(password);
      await consent.getByRole('button', { name: 'Sign in' }).click();
      // The workspace requires a second factor: the code comes before any consent.
      await consent.getByRole('heading', { name: 'Two-step verification' }).waitFor();
      expect(await consent.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      await consent.getByLabel('Verification code').fill(await nextCode());
      await consent.getByRole('button', { name: 'Verify' }).click();
      await expect(consent.locator('h1').textContent()).resolves.toBe(
        'Authorize Herald journey host',
      );
      await expect(consent.locator('#callback').textContent()).resolves.toBe(callback.url);
      await consent.getByRole('button', { name: 'Approve' }).click();
      const callbackUrl = await returned;
      await context.close();

      const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
        authProvider: host,
      });
      await transport.finishAuth(callbackUrl.searchParams.get('code') as string);
      client = new Client({ name: 'herald-journey', version: '1.0.0' });
      await client.connect(transport);
    } finally {
      callback.server.close();
    }
    const result = await client.callTool({
      name: 'get_quick_send_report',
      arguments: { quick_send_id: quickSendId },
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      quick_send: { id: quickSendId, source: 'quick_send', recipients: 50, sent: 50 },
    });
  });

  it("revokes the connection from Developer Tools → MCP & AI; the client's next call is a 401", async () => {
    await page.getByRole('link', { name: 'MCP & AI' }).click();
    await expect(page.locator('#mcp-url').textContent()).resolves.toBe(`${baseUrl}/mcp`);
    const row = page.getByRole('row', { name: /Herald journey host/ });
    await expect(row.textContent()).resolves.toContain(ownerEmail);
    await expect(row.getByText('Active').isVisible()).resolves.toBe(true);
    await screenshots(page, 'mcp');
    page.once('dialog', (dialog) => dialog.dismiss());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect(row.getByText('Active').isVisible()).resolves.toBe(true);
    page.once('dialog', (dialog) => dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}/developer/mcp?done=revoked`);
    await page.getByText('The connection was revoked. Its client must connect again.').waitFor();
    await expect(row.getByText('Revoked').isVisible()).resolves.toBe(true);

    const next = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${host.savedTokens?.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(next.status).toBe(401);
    expect(next.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp", scope="mcp:use", error="invalid_token", error_description="The access token is invalid, expired or revoked."`,
    );
    // The client itself: its refresh is refused too, so it is sent back to sign in.
    host.authorizationUrl = undefined;
    await expect(
      client.callTool({ name: 'get_team_statistics', arguments: {} }),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(host.savedTokens).toBeUndefined();
    expect((host.authorizationUrl as URL | undefined)?.pathname).toBe('/oauth/authorize');
    await client.close();
    expect(policyViolations).toEqual([]);
  });
});

describe('the console refuses, in a browser', () => {
  const password = 'a long member password';
  /** A workspace of its own with an owner who signs in with `password`. */
  const workspaceWithOwner = async (name: string) => {
    const workspace = `r-${randomBytes(5).toString('hex')}`;
    await createWorkspace(server.deps, { name, slug: workspace }, TEST_OPERATOR);
    const email = `owner@${workspace}.test`;
    await addUser(server.deps, { workspace, email, password, role: 'owner' }, TEST_OPERATOR);
    return { slug: workspace, email };
  };
  const signIn = async (page: Page, email: string, secret: string) => {
    await page.goto(`${baseUrl}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(secret);
    return submit(page, '/console/sign-in', () =>
      page.getByRole('button', { name: 'Sign in' }).click(),
    );
  };

  let a: { slug: string; email: string };
  let b: { slug: string; email: string };
  let page: Page;

  beforeAll(async () => {
    a = await workspaceWithOwner('Workspace A');
    b = await workspaceWithOwner('Workspace B');
    page = await (await newContext()).newPage();
    const signedIn = await signIn(page, a.email, password);
    expect(signedIn.status()).toBe(303);
    await page.waitForURL(`${baseUrl}/console/w/${a.slug}`);
  });

  it('a form posted without its CSRF token: 403, "Request refused", nothing created', async () => {
    await page.goto(`${baseUrl}/console/w/${a.slug}/developer/api-keys`);
    await page.locator('#name').fill('No token');
    // What a cross-site form would send: the session cookie, but not the page's token.
    await page
      .locator(`form[action="/console/w/${a.slug}/developer/api-keys"] input[name="_csrf"]`)
      .evaluate((field) => field.remove());
    const refused = await submit(page, `/console/w/${a.slug}/developer/api-keys`, () =>
      page.getByRole('button', { name: 'Create key' }).click(),
    );
    expect(refused.status()).toBe(403);
    await expect(page.locator('h1').textContent()).resolves.toBe('Request refused');
    await expect(page.locator('body').textContent()).resolves.toContain(
      'This form was not sent by a page of your current Herald session (its security token is missing or wrong), so nothing was changed.',
    );
    expect(await apiKeyCount(a.slug)).toBe(0);
  });

  it("the session of workspace A's owner on workspace B's pages and actions: 403, nothing created", async () => {
    const opened = await page.goto(`${baseUrl}/console/w/${b.slug}/developer/api-keys`);
    expect(opened?.status()).toBe(403);
    await expect(
      page.getByRole('heading', { name: 'Another workspace' }).isVisible(),
    ).resolves.toBe(true);
    await expect(page.locator('main').textContent()).resolves.toContain(
      `This page belongs to the workspace "${b.slug}", but this session is signed in to Workspace A.`,
    );
    // The session's own valid token on B's create action: refused all the same.
    await page.goto(`${baseUrl}/console/w/${a.slug}`);
    const csrf = await page.locator('input[name="_csrf"]').first().getAttribute('value');
    const action = await page
      .context()
      .request.post(`${baseUrl}/console/w/${b.slug}/developer/api-keys`, {
        form: { _csrf: csrf ?? '', name: 'Cross', abilities: 'messages:send' },
        maxRedirects: 0,
      });
    expect(action.status()).toBe(403);
    expect(await action.text()).toContain('<h1>Another workspace</h1>');
    expect(await apiKeyCount(b.slug)).toBe(0);
    expect(await apiKeyCount(a.slug)).toBe(0);
  });

  it('throttles sign-in from one address after five failures: the right password is refused too until the window passes', async () => {
    const from = freshAddress();
    const other = await (await newContext(from)).newPage();
    for (let attempt = 1; attempt <= 5; attempt++) {
      const failed = await signIn(other, b.email, `wrong password ${attempt}`);
      expect(failed.status()).toBe(401);
      await expect(other.getByRole('alert').textContent()).resolves.toBe(
        'The email or password is incorrect.',
      );
    }
    const throttled = await signIn(other, b.email, password);
    expect(throttled.status()).toBe(429);
    expect(Number(await throttled.headerValue('retry-after'))).toBeGreaterThan(840);
    await expect(other.getByRole('alert').textContent()).resolves.toBe(
      'Too many failed sign-in attempts. Try again in 15 minutes.',
    );
    expect(other.url()).toBe(`${baseUrl}/console/sign-in`);
    // 15 minutes pass for this account's failures, counted for the account and for the account
    // from this browser's address (the throttle keys them by keyed hashes).
    const subject = (value: string) =>
      createHmac('sha256', purposeKey(server.deps.secret, 'sign-in-throttle-hash'))
        .update(value)
        .digest();
    const subjects = [
      subject(`account:${b.email}`),
      subject(`account-address:${JSON.stringify([b.email, from])}`),
    ];
    const aged = await server.sql`
      update sign_in_failures set failed_at = failed_at - interval '15 minutes'
      where subject in ${server.sql(subjects)}`;
    expect(aged.count).toBe(10);
    const signedIn = await signIn(other, b.email, password);
    expect(signedIn.status()).toBe(303);
    await other.waitForURL(`${baseUrl}/console/w/${b.slug}`);
    await other.context().close();
    await page.context().close();
    expect(policyViolations).toEqual([]);
  });
});
