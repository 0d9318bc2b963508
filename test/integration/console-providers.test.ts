/**
 * Workspace → Providers and Failover routes in the console: a Twilio provider added with every
 * form error at once, its credentials write-only (no page ever shows the auth token, a blank
 * one on edit keeps it), its connection tested against a Twilio-format peer, disabled and
 * enabled; a route ordered with the no-JavaScript Up/Down buttons, saved, edited, deleted; an
 * audit line for each change, in the change's transaction; a viewer and a developer refused.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_COMMANDS } from '../../cli/admin/providers.js';
import { runAsOperator } from '../../cli/context.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import { startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';

const PASSWORD = 'correct horse 1';
const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
const AUTH_TOKEN = 'peer-token-7f3a9c';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let peer: TwilioPeer;

beforeAll(async () => {
  server = await openConsoleApp();
  peer = await startTwilioPeer({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
});
afterAll(async () => {
  await peer?.close();
  await server?.close();
});

async function signedIn(role: 'admin' | 'developer' | 'viewer') {
  const slug = `p-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: `Providers ${slug}`, slug }, TEST_OPERATOR);
  const email = `${role}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { slug, email, browser, base: `/console/w/${slug}` };
}

/** The inline errors of a form, by the id of the input they are under. */
function fieldErrors(html: string): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const field of html.split(/class="field(?: invalid)?"/).slice(1)) {
    const input = /id="([^"]+)"/.exec(field)?.[1];
    const error = /<div class="field-error">([^<]*)<\/div>/.exec(field)?.[1];
    if (input && error) errors[input] = visibleText(error);
  }
  return errors;
}

const auditOf = (slug: string) =>
  server.sql<{ action: string; target: string; details: unknown; source: string; actor: string }[]>`
    select a.action, a.target, a.details, a.source, a.actor from audit_log a
    join workspaces w on w.id = a.workspace_id where w.slug = ${slug} order by a.id`;

const twilioForm = (extra: Record<string, string> = {}) => ({
  type: 'twilio',
  slug: 'tw',
  name: 'Twilio main',
  accountSid: ACCOUNT_SID,
  authToken: AUTH_TOKEN,
  from: '+15005550006',
  baseUrl: peer.url,
  ...extra,
});

describe('Providers', () => {
  it('shows every error of an add form at once, and keeps no credential in the page', async () => {
    const { base, browser } = await signedIn('admin');
    await browser.get(`${base}/providers/new?type=twilio`);
    const refused = await browser.post(
      `${base}/providers/new`,
      twilioForm({
        slug: 'Not a slug',
        accountSid: 'AC123',
        authToken: 'short',
        messagesPerSecond: '0',
        countries: 'AU,ZZ',
      }),
    );
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual({
      'provider-slug': 'Slug "Not a slug" must be lowercase letters, digits, - or _ (at most 63)',
      'provider-accountSid': 'Account SID must be "AC" followed by 32 hexadecimal digits',
      'provider-authToken': 'Auth token must be at least 8 characters without spaces',
      'provider-rate': 'Messages per second must be a whole number from 1 to 10000',
      'provider-countries': 'Countries: "ZZ" is not an ISO 3166 alpha-2 country code',
    });
    expect(refused.body).not.toContain(AUTH_TOKEN);
  });

  it('adds a Twilio provider, tests it, edits it keeping or replacing the token, disables and enables it, each audited', async () => {
    const { slug, email, base, browser } = await signedIn('admin');
    await browser.get(`${base}/providers/new?type=twilio`);
    const created = await browser.post(`${base}/providers/new`, twilioForm());
    expect(created.status).toBe(303);
    expect(created.location).toBe(`${base}/providers/tw/edit?done=created`);

    const edit = await browser.get(`${base}/providers/tw/edit`);
    expect(edit.status).toBe(200);
    expect(edit.body).toContain(`value="${peer.url}"`);
    expect(edit.body).not.toContain(AUTH_TOKEN);
    expect(edit.body).not.toContain(ACCOUNT_SID);
    const list = await browser.get(`${base}/providers`);
    expect(visibleText(list.body)).toContain('Twilio main tw Twilio Enabled');
    expect(list.body).not.toContain(AUTH_TOKEN);

    await browser.get(`${base}/providers/tw/edit`);
    const works = await browser.post(`${base}/providers/tw/test`, {});
    expect(visibleText(works.body)).toContain(
      `Connection works: Twilio account ${ACCOUNT_SID} answered (status active).`,
    );
    expect(works.body).not.toContain(AUTH_TOKEN);
    expect(peer.accountFetches.at(-1)).toEqual({ authorized: true });

    // Blank credentials keep the stored ones: the test still authenticates.
    const kept = await browser.post(
      `${base}/providers/tw/edit`,
      twilioForm({ accountSid: '', authToken: '', name: 'Twilio renamed', messagesPerSecond: '5' }),
    );
    expect(kept.status).toBe(303);
    await browser.get(`${base}/providers/tw/edit`);
    const stillWorks = await browser.post(`${base}/providers/tw/test`, {});
    expect(visibleText(stillWorks.body)).toContain('Connection works');
    expect(visibleText(stillWorks.body)).toContain('Provider Twilio renamed');

    const replaced = await browser.post(
      `${base}/providers/tw/edit`,
      twilioForm({ accountSid: '', authToken: 'a-wrong-token' }),
    );
    expect(replaced.status).toBe(303);
    await browser.get(`${base}/providers/tw/edit`);
    const fails = await browser.post(`${base}/providers/tw/test`, {});
    expect(visibleText(fails.body)).toContain(
      'Connection failed: Twilio refused the account SID and auth token (401).',
    );
    expect(fails.body).not.toContain('a-wrong-token');
    expect(peer.accountFetches.at(-1)).toEqual({ authorized: false });

    await browser.get(`${base}/providers`);
    const disabled = await browser.post(`${base}/providers/tw/disable`, {});
    expect(disabled.location).toBe(`${base}/providers?disabled=tw`);
    await browser.get(`${base}/providers`);
    expect((await browser.post(`${base}/providers/tw/enable`, {})).status).toBe(303);

    const lines = await auditOf(slug);
    const console = lines.filter((line) => line.action.startsWith('provider.'));
    expect(console.every((line) => line.actor === email)).toBe(true);
    expect(console.map(({ action, target, details }) => ({ action, target, details }))).toEqual([
      { action: 'provider.created', target: 'provider tw', details: { type: 'twilio' } },
      {
        action: 'provider.updated',
        target: 'provider tw',
        details: { type: 'twilio', credentials_replaced: false },
      },
      {
        action: 'provider.updated',
        target: 'provider tw',
        details: { type: 'twilio', credentials_replaced: true },
      },
      { action: 'provider.disabled', target: 'provider tw', details: {} },
      { action: 'provider.enabled', target: 'provider tw', details: {} },
    ]);
    expect(JSON.stringify(lines)).not.toContain(AUTH_TOKEN);
    expect(JSON.stringify(lines)).not.toContain('a-wrong-token');
  });

  it('refuses a viewer the pages and a developer every change', async () => {
    const viewer = await signedIn('viewer');
    const page = await viewer.browser.get(`${viewer.base}/providers`);
    expect(page.status).toBe(403);
    expect(visibleText(page.body)).toContain(
      'This needs the developer_tools.read permission in this workspace.',
    );
    expect((await viewer.browser.get(`${viewer.base}/failover-routes`)).status).toBe(403);

    const developer = await signedIn('developer');
    const listed = await developer.browser.get(`${developer.base}/providers`);
    expect(listed.status).toBe(200);
    expect(listed.body).not.toContain('/providers/new');
    const refused = await developer.browser.post(`${developer.base}/providers/new`, twilioForm());
    expect(refused.status).toBe(403);
    expect(visibleText(refused.body)).toContain(
      'This needs the developer_tools.read permission and the owner or admin role in this workspace.',
    );
    expect((await developer.browser.get(`${developer.base}/failover-routes/new`)).status).toBe(403);
    const changes = (await auditOf(developer.slug)).filter((line) =>
      /^(provider|failover_route)\./.test(line.action),
    );
    expect(changes).toEqual([]);
  });
});

describe('Failover routes', () => {
  it('orders providers with Up and Down, shows all errors at once, saves, edits and deletes, each audited', async () => {
    const { slug, base, browser } = await signedIn('admin');
    await browser.get(`${base}/providers/new?type=twilio`);
    expect((await browser.post(`${base}/providers/new`, twilioForm())).status).toBe(303);

    await browser.get(`${base}/failover-routes/new`);
    const noneYet = await browser.post(`${base}/failover-routes/new`, {
      slug: 'Bad slug',
      op: 'save',
    });
    expect(noneYet.status).toBe(422);
    expect(fieldErrors(noneYet.body)).toEqual({
      'route-slug': 'Slug "Bad slug" must be lowercase letters, digits, - or _ (at most 63)',
      'route-providers-label':
        'Providers must list 1 to 5 distinct provider slugs, in failover order',
    });

    // Add tw, then own; move own up: own first.
    const one = await browser.post(`${base}/failover-routes/new`, {
      slug: 'main',
      add: 'tw',
      op: 'add',
    });
    expect(one.status).toBe(200);
    const two = await browser.post(`${base}/failover-routes/new`, {
      slug: 'main',
      providers: 'tw',
      add: 'own',
      op: 'add',
    });
    expect([...two.body.matchAll(/name="providers" value="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'tw',
      'own',
    ]);
    const moved = await browser.post(`${base}/failover-routes/new`, {
      slug: 'main',
      providers: ['tw', 'own'],
      op: 'up-1',
    });
    expect([...moved.body.matchAll(/name="providers" value="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'own',
      'tw',
    ]);
    const saved = await browser.post(`${base}/failover-routes/new`, {
      slug: 'main',
      name: 'Main route',
      providers: ['own', 'tw'],
      op: 'save',
    });
    expect(saved.status).toBe(303);
    const list = await browser.get(`${base}/failover-routes`);
    expect(visibleText(list.body)).toContain(
      "Main route main Herald's provider own Twilio main tw",
    );

    await browser.get(`${base}/failover-routes/main/edit`);
    const down = await browser.post(`${base}/failover-routes/main/edit`, {
      name: 'Main route',
      providers: ['own', 'tw'],
      op: 'down-0',
    });
    expect([...down.body.matchAll(/name="providers" value="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'tw',
      'own',
    ]);
    expect(
      (
        await browser.post(`${base}/failover-routes/main/edit`, {
          name: 'Main route',
          providers: ['tw', 'own'],
          op: 'save',
        })
      ).status,
    ).toBe(303);
    const [route] = await server.sql<{ providerSlugs: string[] }[]>`
      select r.provider_slugs from failover_routes r join workspaces w on w.id = r.workspace_id
      where w.slug = ${slug} and r.slug = 'main'`;
    expect(route?.providerSlugs).toEqual(['tw', 'own']);

    await browser.get(`${base}/failover-routes`);
    expect((await browser.post(`${base}/failover-routes/main/delete`, {})).status).toBe(303);
    const routeLines = (await auditOf(slug)).filter((line) =>
      line.action.startsWith('failover_route.'),
    );
    expect(routeLines.map(({ action, target, details }) => ({ action, target, details }))).toEqual([
      {
        action: 'failover_route.created',
        target: 'failover route main',
        details: { providers: 'own,tw' },
      },
      {
        action: 'failover_route.updated',
        target: 'failover route main',
        details: { providers: 'tw,own' },
      },
      { action: 'failover_route.deleted', target: 'failover route main', details: {} },
    ]);
  });
});

describe('the CLI doors of the same use-cases', () => {
  it('records provider create, disable and route create once each, as the operator', async () => {
    const { slug } = await signedIn('admin');
    const command = (name: string) => {
      const found = PROVIDER_COMMANDS.find((each) => each.name === name);
      if (!found) throw new Error(`no command ${name}`);
      return found;
    };
    const context = { env: server.deps.env, secret: server.deps.secret, sql: server.sql };
    await runAsOperator(context, command('provider create'), {
      workspace: slug,
      slug: 'tw',
      type: 'twilio',
      'account-sid': ACCOUNT_SID,
      'auth-token': AUTH_TOKEN,
      from: '+15005550006',
    });
    await runAsOperator(context, command('provider disable'), { workspace: slug, slug: 'tw' });
    await runAsOperator(context, command('route create'), {
      workspace: slug,
      slug: 'backup',
      providers: 'tw,own',
    });
    const lines = (await auditOf(slug)).filter((line) =>
      /^(provider|failover_route)\./.test(line.action),
    );
    expect(lines.every((line) => line.source === 'cli')).toBe(true);
    expect(lines.map(({ action, target, details }) => ({ action, target, details }))).toEqual([
      { action: 'provider.created', target: 'provider tw', details: { type: 'twilio' } },
      { action: 'provider.disabled', target: 'provider tw', details: {} },
      {
        action: 'failover_route.created',
        target: 'failover route backup',
        details: { providers: 'tw,own' },
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain(AUTH_TOKEN);
  });
});
