/**
 * Issue 31 item 2 in Chromium (playwright-core, as test/e2e/console-journey.test.ts drives it): a
 * Quick Send whose receipts the simulator holds back completes with every message awaiting its
 * receipt; the open batch page keeps polling and shows the receipts arrive, counters, delivery
 * bar and recipient rows alike, without a reload. No page breaks its Content Security Policy.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { buildApp } from '../../server/app.js';
import { type RunningWorker, startHeraldWorker } from '../../server/worker.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { freePorts } from '../support/processes.js';
import { setBehaviour } from '../support/send.js';
import { registerTestNamespace } from '../support/stack.js';

const PASSWORD = 'correct horse 1';
/** Receipts come this long after each submission: the batch completes before any arrives. */
const RECEIPT_DELAY_MS = 6_000;
/**
 * Receipts must reach this app, so the file runs a worker of its own (PUBLIC_URL: this app) in a
 * namespace of its own, with a simulator of its own.
 */
const namespace = `herald-console-live-${Date.now()}`;

let baseUrl: string;
let app: FastifyInstance;
let sql: Sql;
let deps: Parameters<typeof buildApp>[0];
let carrier: RunningSimulator;
let worker: RunningWorker;
let browser: Browser;
const policyViolations: string[] = [];

beforeAll(async () => {
  await registerTestNamespace(namespace);
  const [port] = (await freePorts(1)) as [number];
  baseUrl = `http://127.0.0.1:${port}`;
  const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL: baseUrl });
  const secret = inject('secret');
  sql = createSql(inject('databaseUrl'), { max: 4 });
  const temporal = await connectTemporalClient(inject('temporalAddress'), namespace);
  deps = { env, publicUrl: baseUrl, secret, sql, temporal };
  app = buildApp(deps, { logger: false });
  await app.listen({ host: '127.0.0.1', port });
  carrier = await startSimulator({ port: 0 });
  await setBehaviour(carrier.url, {
    prefix: '',
    receipt: { outcome: 'delivered', delay_ms: RECEIPT_DELAY_MS },
  });
  worker = await startHeraldWorker({
    address: inject('temporalAddress'),
    namespace,
    sql,
    ownProviderUrl: carrier.url,
    publicUrl: baseUrl,
    secret,
    webhookDispatcher: false,
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.shutdown();
  await carrier?.close();
  await app?.close();
  await deps?.temporal.connection.close();
  await sql?.end();
}, 60_000);

const textOf = async (page: Page, selector: string) =>
  ((await page.locator(selector).textContent()) ?? '').trim();

describe('An open batch page', () => {
  it('shows receipts arrive after the batch completed, without a reload', async () => {
    const slug = `live-${randomBytes(4).toString('hex')}`;
    await createWorkspace(deps, { name: `Live ${slug}`, slug }, TEST_OPERATOR);
    const email = `owner@${slug}.test`;
    await addUser(
      deps,
      { workspace: slug, email, password: PASSWORD, role: 'owner' },
      TEST_OPERATOR,
    );

    const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    context.setDefaultTimeout(30_000);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text()))
        policyViolations.push(message.text());
    });
    await page.goto(`${baseUrl}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${baseUrl}/console/w/${slug}`);

    const recipients = Array.from({ length: 5 }, (_, index) => `+61412556${100 + index}`);
    await page.goto(`${baseUrl}/console/w/${slug}/quick-send`);
    await page.getByLabel('Recipients', { exact: true }).fill(recipients.join('\n'));
    await page.getByLabel('Message').fill('Watch the receipts come in.');
    await page.getByRole('button', { name: 'Send now' }).click();
    await page.waitForURL(/\/batches\/\d+$/);
    // Counted once: any later navigation of the main frame would be a reload.
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });

    // Completed, every message sent, none delivered yet: the page says it is still waiting.
    await page.locator('#batch-live[data-status="completed"]').waitFor();
    expect(await textOf(page, '#count-sent')).toBe('5');
    expect(await textOf(page, '#count-awaiting')).toBe('5');
    expect(await textOf(page, '#count-delivered')).toBe('0');
    expect(await textOf(page, '#batch-updating')).toBe('5 awaiting a receipt: updating live…');
    expect(await page.locator('#recipients .badge').allTextContents()).toEqual(
      Array(5).fill('sent'),
    );

    // The receipts arrive; the page follows without a reload, rows and bar included.
    await expect
      .poll(() => textOf(page, '#count-delivered'), {
        timeout: RECEIPT_DELAY_MS + 20_000,
        interval: 250,
      })
      .toBe('5');
    expect(await textOf(page, '#count-awaiting')).toBe('0');
    expect(await textOf(page, '#delivery-rate')).toBe('100%');
    expect(await page.locator('#recipients .badge').allTextContents()).toEqual(
      Array(5).fill('delivered'),
    );
    expect(await page.locator('.delivery-bar svg').getAttribute('aria-label')).toBe(
      '5 messages: 5 delivered',
    );
    // Settled: the fragment stops asking for itself.
    expect(await page.locator('#batch-live').getAttribute('data-live')).toBe('no');
    expect(await page.locator('#batch-live').getAttribute('hx-trigger')).toBeNull();
    expect(navigations).toBe(0);
    expect(policyViolations).toEqual([]);
    await context.close();
  }, 90_000);
});
