/**
 * Developer Tools → Webhooks in the console: an endpoint created with the API's rules (secret
 * shown once), disabled, its attempts page, deleted; another workspace's endpoint not found;
 * a viewer refused.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { createWebhookEndpoint } from '../../commands/webhooks/webhooks.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
/** The one event a developer may subscribe to without recipients.read (it carries no number). */
const EVENT = 'campaign.completed';

beforeAll(async () => {
  server = await openConsoleApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
});
afterAll(() => server.close());

async function signedIn(role: 'developer' | 'viewer', on = server) {
  const slug = `h-${randomBytes(5).toString('hex')}`;
  await createWorkspace(on.deps, { name: `Hooks ${slug}`, slug }, TEST_OPERATOR);
  const email = `${role}@${slug}.test`;
  await addUser(on.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(on.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  await browser.get(`/console/w/${slug}/developer/webhooks`);
  return { slug, browser };
}

describe('Webhooks', () => {
  it('creates (secret shown once), disables, shows attempts and deletes an endpoint', async () => {
    const { slug, browser } = await signedIn('developer');
    const bad = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'ftp://example.test/hook',
      events: EVENT,
    });
    expect(bad.status).toBe(422);
    expect(visibleText(bad.body)).toContain('URL "ftp://example.test/hook" is not an http(s) URL');
    const created = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: EVENT,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatch(/<code id="webhook-secret">whsec_[^<]+<\/code>/);
    const [endpoint] = await server.sql<{ id: number; enabled: boolean }[]>`
      select e.id, e.enabled from webhook_endpoints e join workspaces w on w.id = e.workspace_id
      where w.slug = ${slug}`;
    expect(endpoint?.enabled).toBe(true);
    const listed = await browser.get(`/console/w/${slug}/developer/webhooks`);
    expect(listed.body).not.toContain('whsec_');
    expect(
      (await browser.post(`/console/w/${slug}/developer/webhooks/${endpoint?.id}/disable`, {}))
        .status,
    ).toBe(303);
    const [after] = await server.sql<{ enabled: boolean }[]>`
      select enabled from webhook_endpoints where id = ${endpoint?.id ?? 0}`;
    expect(after?.enabled).toBe(false);
    const attempts = await browser.get(`/console/w/${slug}/developer/webhooks/${endpoint?.id}`);
    expect(attempts.status).toBe(200);
    expect(visibleText(attempts.body)).toContain('No deliveries yet');
    await browser.get(`/console/w/${slug}/developer/webhooks`);
    expect(
      (await browser.post(`/console/w/${slug}/developer/webhooks/${endpoint?.id}/delete`, {}))
        .status,
    ).toBe(303);
    const [gone] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from webhook_endpoints where id = ${endpoint?.id ?? 0}`;
    expect(gone?.count).toBe(0);
  });

  it("does not find another workspace's endpoint, and refuses a viewer", async () => {
    const { slug, browser } = await signedIn('developer');
    const other = `h-${randomBytes(5).toString('hex')}`;
    await createWorkspace(server.deps, { name: 'Other', slug: other }, TEST_OPERATOR);
    const { endpoint } = await createWebhookEndpoint(
      server.deps,
      {
        workspace: other,
        url: 'http://127.0.0.1:9/other',
        events: [EVENT],
      },
      TEST_OPERATOR,
    );
    expect((await browser.get(`/console/w/${slug}/developer/webhooks/${endpoint.id}`)).status).toBe(
      404,
    );
    expect(
      (await browser.post(`/console/w/${slug}/developer/webhooks/${endpoint.id}/delete`, {}))
        .status,
    ).toBe(404);
    const viewer = await signedIn('viewer');
    expect((await viewer.browser.get(`/console/w/${viewer.slug}/developer/webhooks`)).status).toBe(
      403,
    );
  });
});

describe('events that carry phone numbers (recipients.read)', () => {
  const NEEDS_ONE =
    "message.delivered carries recipients' full phone numbers: subscribing to it needs the " +
    'recipients.read permission in this workspace.';
  const fieldError = (html: string) =>
    visibleText(/<div class="field-error">([^<]*)<\/div>/.exec(html)?.[1] ?? '');
  const endpointsOf = (slug: string) =>
    server.sql<{ events: string[]; enabled: boolean }[]>`
      select e.events, e.enabled from webhook_endpoints e join workspaces w on w.id = e.workspace_id
      where w.slug = ${slug} order by e.id`;

  it('refuses a developer without recipients.read a message or OTP endpoint, and stores none', async () => {
    const { slug, browser } = await signedIn('developer');
    const page = await browser.get(`/console/w/${slug}/developer/webhooks`);
    expect(visibleText(page.body)).toContain(
      'Subscribing to message.sent, message.delivered, message.failed, message.received, otp.accepted, otp.verified, ' +
        'otp.expired needs the recipients.read permission, which you do not have here',
    );
    const one = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: 'message.delivered',
    });
    expect(one.status).toBe(403);
    expect(fieldError(one.body)).toBe(NEEDS_ONE);
    const several = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: ['campaign.completed', 'otp.verified', 'message.sent'],
    });
    expect(several.status).toBe(403);
    expect(fieldError(several.body)).toBe(
      "message.sent, otp.verified carry recipients' full phone numbers: subscribing to them " +
        'needs the recipients.read permission in this workspace.',
    );
    expect(await endpointsOf(slug)).toEqual([]);
  });

  it('lets a member who holds recipients.read subscribe to them', async () => {
    const { slug, browser } = await signedIn('developer');
    await server.sql`
      update workspace_members set permissions = array_append(permissions, 'recipients.read')
      where workspace_id = (select id from workspaces where slug = ${slug})`;
    const created = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: 'message.delivered',
    });
    expect(created.status).toBe(201);
    expect(await endpointsOf(slug)).toEqual([{ events: ['message.delivered'], enabled: true }]);
  });

  it('refuses such a developer enabling a disabled one, which stays disabled', async () => {
    const { slug, browser } = await signedIn('developer');
    const { endpoint } = await createWebhookEndpoint(
      server.deps,
      {
        workspace: slug,
        url: 'http://127.0.0.1:9/numbers',
        events: ['message.delivered'],
      },
      TEST_OPERATOR,
    );
    await server.sql`update webhook_endpoints set enabled = false where id = ${endpoint.id}`;
    await browser.get(`/console/w/${slug}/developer/webhooks`);
    const refused = await browser.post(
      `/console/w/${slug}/developer/webhooks/${endpoint.id}/enable`,
      {},
    );
    expect(refused.status).toBe(403);
    expect(visibleText(/<p>([^<]*)<\/p>/.exec(refused.body)?.[1] ?? '')).toBe(NEEDS_ONE);
    expect(await endpointsOf(slug)).toEqual([{ events: ['message.delivered'], enabled: false }]);
    // Disabling or deleting hands no number over: those stay open to them.
    expect(
      (await browser.post(`/console/w/${slug}/developer/webhooks/${endpoint.id}/delete`, {}))
        .status,
    ).toBe(303);
  });
});

describe('a refused URL (private addresses not allowed)', () => {
  let strict: Awaited<ReturnType<typeof openConsoleApp>>;
  beforeAll(async () => {
    strict = await openConsoleApp();
  });
  afterAll(() => strict.close());

  it('says only that the address is not allowed, never the address the name resolved to', async () => {
    const { slug, browser } = await signedIn('developer', strict);
    const refused = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'http://localhost:9/hook',
      events: 'campaign.completed',
    });
    expect(refused.status).toBe(422);
    expect(/<div class="field-error">([^<]*)<\/div>/.exec(refused.body)?.[1]).toBe(
      'URL refused: localhost does not resolve to an allowed address; webhooks go only to public ' +
        'addresses (WEBHOOK_ALLOW_PRIVATE_URLS=true allows private ones)',
    );
    expect(refused.body).not.toMatch(/127\.0\.0\.1|::1|loopback/);
  });
});
