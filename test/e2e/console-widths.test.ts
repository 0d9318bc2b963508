/**
 * Every GET page of the console's route table, opened in Chromium as an owner of a workspace with
 * data in it (an API key, a batch, an OTP service, a template, a sender, a webhook endpoint, a
 * second member, an open invitation), at 1366, 1024 and 390 px: answered 200, no Content
 * Security Policy violation, and nothing wider than the window. Tables may scroll inside their
 * own container (`.table-wrap`) on a phone; at 1366 and 1024 px they show every column.
 * The routes come from fastify's own table, so a page added later is covered without naming it
 * here; a route with a parameter is opened through a link to it on a page already visited.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../commands/otp/credits.js';
import { createProvider } from '../../commands/providers/providers.js';
import { createInvitation } from '../../commands/team/invitations.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { withProviderTypes } from '../../server/provider-types.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { freshAddress, openConsoleApp } from '../support/console.js';
import { consoleGetRoutes, overflowProblems, WIDTHS } from '../support/console-widths.js';
import { freePorts } from '../support/processes.js';

/** Where the screenshot of a page that does not fit goes, for whoever reads the failure. */
const MISFITS = join(tmpdir(), 'herald-console-widths');

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let baseUrl: string;
let browser: Browser;

beforeAll(async () => {
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  // The webhook endpoint below is on loopback: no name resolves here.
  server = await openConsoleApp({
    PUBLIC_URL: baseUrl,
    TRUSTED_PROXIES: '127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  await server.app.listen({ host: '127.0.0.1', port });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  await mkdir(MISFITS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('every console page at 1366, 1024 and 390 px', () => {
  const slug = `w-${randomBytes(5).toString('hex')}`;
  const email = `owner@${slug}.test`;
  const password = 'a long owner password';
  let page: Page;
  const violations: string[] = [];
  /** Pages no other page links to: the invitation (its link is shown once), the batch's cancel. */
  const unlinked: Record<string, string> = {};

  /** A console form posted with the page's CSRF token, as the page would post it. */
  async function post(path: string, form: Record<string, string | string[]>) {
    const opened = await page.goto(`${baseUrl}/console/w/${slug}/developer/api-keys`);
    expect(opened?.status(), 'the API keys page, whose sign-out form has the token').toBe(200);
    const csrf = (await page.locator('input[name="_csrf"]').first().getAttribute('value')) ?? '';
    const body = new URLSearchParams({ _csrf: csrf });
    for (const [name, value] of Object.entries(form))
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    const answer = await page.request.post(`${baseUrl}/console/w/${slug}${path}`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      data: body.toString(),
      maxRedirects: 0,
    });
    const refusals = (await answer.text()).match(/class="(?:field-error|alert error)"[^>]*>[^<]*/g);
    expect(answer.status(), `${path}: ${refusals?.join(' ')}`).toBeLessThan(400);
    return answer;
  }

  beforeAll(async () => {
    await createWorkspace(
      server.deps,
      {
        name: 'Acme Logistics Southern Hemisphere Operations',
        slug,
      },
      TEST_OPERATOR,
    );
    await addUser(server.deps, { workspace: slug, email, password, role: 'owner' }, TEST_OPERATOR);
    const developer = await addUser(
      server.deps,
      {
        workspace: slug,
        email: `a.very.long.developer.address@${slug}.test`,
        password: 'developer password',
        role: 'developer',
      },
      TEST_OPERATOR,
    );
    const invitation = await createInvitation(
      server.deps,
      {
        workspace: slug,
        email: `invited.analyst@${slug}.test`,
        role: 'viewer',
      },
      TEST_OPERATOR,
    );
    unlinked['/console/invitations/:token'] = `/console/invitations/${invitation.token}`;
    await addCredits(server.deps, { workspace: slug, amount: 10 }, TEST_OPERATOR);
    // A provider and a failover route through it, as `herald provider add` and `route add` save them.
    await server.sql`
      insert into providers (workspace_id, slug, name, type, requires_sender_id, settings)
      values (${developer.workspace.id}, 'backup-sim', 'Backup simulator', 'simulator', false,
              ${server.sql.json({ base_url: 'http://127.0.0.1:9' })})`;
    await createProvider(withProviderTypes(server.deps), TEST_OPERATOR, {
      workspace: slug,
      slug: 'backup-twilio',
      name: 'Backup Twilio',
      type: 'twilio',
      fields: {
        accountSid: `AC${'0'.repeat(32)}`,
        authToken: 'a'.repeat(32),
        messagingServiceSid: `MG${'0'.repeat(32)}`,
        baseUrl: 'http://127.0.0.1:9',
      },
    });
    await server.sql`
      insert into failover_routes (workspace_id, slug, name, provider_slugs)
      values (${developer.workspace.id}, 'main', 'Main route', ${['own', 'backup-sim']})`;
    const context = await browser.newContext({
      viewport: { width: WIDTHS[0], height: 900 },
      extraHTTPHeaders: { 'x-forwarded-for': freshAddress() },
    });
    context.setDefaultTimeout(30_000);
    context.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text()))
        violations.push(`${page.url()}: ${message.text()}`);
    });
    page = await context.newPage();
    await page.goto(`${baseUrl}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}`);

    await post('/developer/api-keys', {
      name: 'Billing backend for the southern warehouses',
      abilities: ['messages:send', 'messages:read', 'otp:send', 'otp:verify'],
    });
    await post('/otp-templates', {
      slug: 'sign-in-code',
      name: 'Sign-in code',
      body: 'Your Acme Logistics sign-in code is {code}. It expires soon.',
      purpose: 'transactional',
      enabled: 'on',
    });
    await post('/otp-senders', { provider: 'own', sender: 'AcmeLogist' });
    await post('/otp-services', {
      name: 'Sign-in codes for the warehouse handhelds',
      purpose: 'login',
      code_length: '6',
      expires_in_minutes: '5',
      message_template: 'Your Acme Logistics code is {code}.',
    });
    await post('/developer/webhooks', {
      url: 'http://127.0.0.1:9/herald/delivery-receipts/southern-warehouses',
      events: ['message.delivered', 'message.failed'],
      description: 'Delivery receipts for the southern warehouses',
    });
    const recipients = Array.from(
      { length: 3 },
      () => `+6146${String(randomInt(10_000_000)).padStart(7, '0')}`,
    );
    const sent = await post('/quick-send', {
      recipients: recipients.join('\n'),
      message: 'Your order ships today from the southern warehouse; reply STOP to opt out.',
      reference: 'Shipping notice for the southern warehouses',
    });
    const batch = sent.headers().location ?? '';
    expect(batch).toMatch(/\/batches\/\d+$/);
    unlinked['/console/w/:workspace/batches/:id/cancel'] = `${batch}/cancel`;
    unlinked['/console/w/:workspace/batches/:id/live'] = `${batch}/live`;
    // A member's password reset link is shown once, to the owner who issues it.
    if (consoleGetRoutes(server.app).includes('/console/password-reset/:token')) {
      const issued = await post(`/team/members/${developer.userId}/password-reset`, {});
      const link = /\/console\/password-reset\/[^"<\s]+/.exec(await issued.text())?.[0];
      expect(link).toBeDefined();
      unlinked['/console/password-reset/:token'] = link ?? '';
    }
  }, 120_000);

  // 3 widths of every page, each opened and measured: generous on a loaded machine.
  it('answers 200 on every GET page, none wider than the window and none breaking the CSP', {
    timeout: 600_000,
  }, async () => {
    const routes = consoleGetRoutes(server.app);
    const pages = await visitAll(page, baseUrl, slug, routes, unlinked);
    // The route table is read, not a list kept here: the pages every console has today.
    for (const path of ['', '/developer/api-keys', '/team', '/otp-services', '/batches/:id'])
      expect(pages.map((visited) => visited.route)).toContain(`/console/w/:workspace${path}`);
    const misfits: string[] = [];
    for (const visited of pages) {
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        const answer = await page.goto(visited.url);
        if (answer?.status() !== 200) {
          misfits.push(`${visited.route} at ${width}px: answered ${answer?.status()}`);
          continue;
        }
        const problems = await overflowProblems(page);
        if (problems.length > 0) {
          const name = `${visited.route.replace(/[^a-z0-9]+/gi, '-')}-${width}.png`;
          await page.screenshot({ path: join(MISFITS, name), fullPage: true });
          misfits.push(`${visited.route} at ${width}px: ${problems.join('; ')}`);
        }
      }
    }
    expect(misfits).toEqual([]);
    expect(violations).toEqual([]);
  });
});

/**
 * Opens each page route once (at the first width), a route with parameters through a link to it
 * found on a page opened before (or named in `unlinked`); fragments (no stylesheet) and streams are not pages.
 */
async function visitAll(
  page: Page,
  baseUrl: string,
  slug: string,
  routes: string[],
  unlinked: Record<string, string>,
) {
  const visited: { route: string; url: string }[] = [];
  const links = new Set<string>();
  const fillable = (route: string) => route.replace(':workspace', slug);
  let pending = [...routes];
  for (let pass = 0; pass < 4 && pending.length > 0; pass++) {
    const next: string[] = [];
    for (const route of pending) {
      const path = fillable(route);
      const known = unlinked[route];
      const url = known
        ? new URL(known, baseUrl).href
        : path.includes(':')
          ? linkTo(path, links)
          : `${baseUrl}${path}`;
      if (url === undefined) {
        next.push(route);
        continue;
      }
      const answer = await page.goto(url);
      // A page has the console's stylesheet; an htmx fragment does not.
      const document = await page.evaluate(
        `!!globalThis.document.querySelector('link[rel="stylesheet"][href^="/console/assets/console.css"]')`,
      );
      const hrefs = await page.evaluate(
        "[...document.querySelectorAll('a[href]')].map((anchor) => anchor.href)",
      );
      for (const href of hrefs as string[]) links.add(href);
      if (!document && (answer?.status() ?? 0) < 300) continue;
      visited.push({ route, url });
    }
    pending = next;
  }
  expect(pending, 'routes no visited page links to').toEqual([]);
  return visited;
}

/** A link already seen whose path fits the route's pattern. */
function linkTo(path: string, links: Set<string>): string | undefined {
  const pattern = new RegExp(`^${path.replace(/:[A-Za-z]+/g, '[^/?#]+')}$`);
  for (const link of links) if (pattern.test(new URL(link).pathname)) return link;
  return undefined;
}
