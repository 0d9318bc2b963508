import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStack, type Stack } from '../support/stack.js';

/**
 * The rendered API reference at /api/v1/docs: Swagger UI served by Herald itself (no CDN), under
 * a policy that runs scripts and styles from this origin only, in a real browser.
 */

const POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

let stack: Stack;
let base: string;
let browser: Browser;

beforeAll(async () => {
  stack = await openStack();
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(stack.app.server.address() as { port: number }).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('GET /api/v1/docs', () => {
  it('answers the page without authentication, under its strict policy, with no inline script', async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(POLICY);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.body).not.toMatch(/https?:\/\//);
    const scripts = [...response.body.matchAll(/<script([^>]*)>/g)].map(
      ([, attributes]) => attributes,
    );
    expect(scripts).toEqual([
      expect.stringMatching(
        /^ src="\/api\/v1\/docs\/assets\/swagger-ui-bundle\.js\?v=[0-9a-f]{12}"$/,
      ),
      expect.stringMatching(/^ src="\/api\/v1\/docs\/assets\/start-up\.js\?v=[0-9a-f]{12}"$/),
    ]);
  });

  it('serves its scripts and styles itself, cacheable for a year; anything else is the 404 shape', async () => {
    const page = (await stack.app.inject({ method: 'GET', url: '/api/v1/docs' })).body;
    const assets = [...page.matchAll(/(?:src|href)="(\/api\/v1\/docs\/assets\/[^"]+)"/g)].map(
      ([, url]) => url as string,
    );
    expect(assets).toHaveLength(3);
    for (const url of assets) {
      const asset = await stack.app.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(200);
      expect(asset.headers['content-type'], url).toMatch(/^text\/(javascript|css); charset=utf-8$/);
      expect(asset.headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
    }
    const missing = await stack.app.inject({
      method: 'GET',
      url: '/api/v1/docs/assets/index.html',
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      title: 'Not Found',
      detail: 'No route matches GET /api/v1/docs/assets/index.html.',
      instance: 'http://herald.test/api/v1/docs/assets/index.html',
      code: 'NOT-404',
      link: '',
    });
  });

  it('is left out of the OpenAPI document it renders', async () => {
    const doc = (await stack.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/api/v1/docs'))).toEqual([]);
  });

  it('renders every operation with its example answers in a browser, fetching nothing elsewhere and breaking no policy', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const errors: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    // Chromium reports a blocked script or style on the console too; this names the directive.
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('policy: ' + event.violatedDirective + ' ' + event.blockedURI));",
    );
    try {
      await page.goto(`${base}/api/v1/docs`);
      await page.locator('.opblock').nth(5).waitFor();
      expect(await page.locator('.opblock').count()).toBe(6);
      await page.locator('.opblock-summary', { hasText: '/api/v1/otp/send' }).click();
      const operation = page.locator('.opblock', { hasText: '/api/v1/otp/send' });
      await operation
        .getByText(
          'The workspace does not have enough credits: this code needs 1. An operator adds credits with `herald credits add --workspace acme --amount <n>`.',
        )
        .waitFor();
      await operation.getByText('Verification code sent.').first().waitFor();
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
