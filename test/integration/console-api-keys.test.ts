/**
 * Developer Tools → API keys in the console: the routing picker of `herald key create` (none, a
 * direct provider or a failover route of the workspace). A key made with a direct provider sends
 * through it (its simulator's inbox, the message's provider); another workspace's route and an
 * unreadable choice are refused at the picker; the list shows each key's routing; a viewer is
 * refused. A key's own rate limit (blank: the workspace's key rate) is saved, an unreadable one
 * refused at its field, and held to over REST.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits } from '../../commands/otp/credits.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { insertFailoverRoute, insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const simulators: RunningSimulator[] = [];
const PASSWORD = 'correct horse 1';
/** A send reaches the simulator through its workflow: seconds on a busy machine. */
const POLL = { timeout: 30_000, interval: 100 };

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(async () => {
  await Promise.all(simulators.map((simulator) => simulator.close()));
  await server.close();
});

async function workspace() {
  const slug = `k-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Keys ${slug}`, slug }, TEST_OPERATOR);
  return { slug, id };
}

async function signedIn(slug: string, role: 'developer' | 'viewer') {
  const email = `${role}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  await browser.get(`/console/w/${slug}/developer/api-keys`);
  return browser;
}

/** A simulator of its own, registered as the workspace's provider `providerSlug`. */
async function simulatorProvider(workspaceId: number, providerSlug: string) {
  const simulator = await startSimulator({ port: 0 });
  simulators.push(simulator);
  await insertProvider(server.sql, {
    workspaceId,
    slug: providerSlug,
    name: `Provider ${providerSlug}`,
    type: 'simulator',
    requiresSenderId: false,
    settings: { base_url: simulator.url },
  });
  return simulator;
}

async function inbox(simulatorUrl: string, to: string) {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  return ((await response.json()) as { messages: { body: string }[] }).messages;
}

async function keyCount(slug: string) {
  const [row] = await server.sql<{ count: number }[]>`
    select count(*)::int as count from api_keys k join workspaces w on w.id = k.workspace_id
    where w.slug = ${slug}`;
  return row?.count;
}

const newToken = (body: string) => /<code id="new-token">([^<]+)<\/code>/.exec(body)?.[1] ?? '';

describe('API key routing', () => {
  it('offers the workspace providers and routes; a key with a direct provider sends through it', async () => {
    const { slug, id } = await workspace();
    const direct = await simulatorProvider(id, 'direct-sim');
    await insertFailoverRoute(server.sql, {
      workspaceId: id,
      slug: 'backup',
      name: 'Backup route',
      providerSlugs: ['direct-sim', 'own'],
    });
    const browser = await signedIn(slug, 'developer');
    const form = await browser.get(`/console/w/${slug}/developer/api-keys`);
    expect(form.body).toContain(`<option value="provider:own">own (Herald's provider)</option>`);
    expect(form.body).toContain(
      '<option value="provider:direct-sim">Provider direct-sim (direct-sim)</option>',
    );
    expect(form.body).toContain(
      '<option value="route:backup">Backup route (direct-sim → own)</option>',
    );

    const created = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Direct',
      abilities: ['messages:send', 'messages:read'],
      routing: 'provider:direct-sim',
    });
    expect(created.status).toBe(201);
    const token = newToken(created.body);
    expect(token).toMatch(/^hld_/);
    const routed = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Routed',
      abilities: 'messages:send',
      routing: 'route:backup',
    });
    expect(routed.status).toBe(201);
    const plain = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Plain',
      abilities: 'messages:send',
    });
    expect(plain.status).toBe(201);

    const [...rows] = await server.sql`
      select k.name, k.routing_type, k.provider_slug, k.failover_route_slug from api_keys k
      where k.workspace_id = ${id} order by k.id`;
    expect(rows).toEqual([
      {
        name: 'Direct',
        routingType: 'direct',
        providerSlug: 'direct-sim',
        failoverRouteSlug: null,
      },
      { name: 'Routed', routingType: 'failover', providerSlug: null, failoverRouteSlug: 'backup' },
      { name: 'Plain', routingType: null, providerSlug: null, failoverRouteSlug: null },
    ]);
    const listed = visibleText((await browser.get(`/console/w/${slug}/developer/api-keys`)).body);
    expect(listed).toMatch(/Plain messages:send none \(request's choice\)/);
    expect(listed).toMatch(/Routed messages:send failover route backup/);
    expect(listed).toMatch(/Direct messages:send messages:read provider direct-sim/);

    await addCredits(server.deps, { workspace: slug, amount: 10 }, TEST_OPERATOR);
    const recipient = `+61494${String(randomInt(1_000_000)).padStart(6, '0')}`;
    const sent = await server.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${token}` },
      payload: { recipients: [recipient], message: 'Through the key provider.' },
    });
    expect(sent.statusCode).toBe(202);
    const campaignId = sent.json().data.message.id as number;
    await expect.poll(async () => (await inbox(direct.url, recipient)).length, POLL).toBe(1);
    const [message] = await inbox(direct.url, recipient);
    expect(message?.body).toBe('Through the key provider.');
    expect(await inbox(inject('simulatorUrl'), recipient)).toEqual([]);
    await expect
      .poll(async () => {
        const [row] = await server.sql<{ providerSlug: string | null }[]>`
          select provider_slug from campaign_messages where campaign_id = ${campaignId}`;
        return row?.providerSlug;
      }, POLL)
      .toBe('direct-sim');
  });

  it("refuses another workspace's route, an unknown provider and an unreadable choice at the picker", async () => {
    const { slug } = await workspace();
    const other = await workspace();
    await insertFailoverRoute(server.sql, {
      workspaceId: other.id,
      slug: 'theirs',
      name: 'Theirs',
      providerSlugs: ['own'],
    });
    const browser = await signedIn(slug, 'developer');
    const foreign = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      abilities: 'messages:send',
      routing: 'route:theirs',
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body).toContain(
      `<div class="field-error">Failover route &quot;theirs&quot; is not a failover route of ${slug}</div>`,
    );
    // The picker keeps the other fields as they were given.
    expect(foreign.body).toContain('value="messages:send" checked');

    const unknown = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      abilities: 'messages:send',
      routing: 'provider:ghost',
    });
    expect(unknown.status).toBe(422);
    expect(visibleText(unknown.body)).toContain(
      `Direct provider "ghost" is not a provider of ${slug}`,
    );

    const unreadable = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      abilities: 'messages:send',
      routing: 'carrier-pigeon',
    });
    expect(unreadable.status).toBe(422);
    expect(unreadable.body).toContain(
      '<div class="field-error">Routing must be none, a direct provider or a failover route.</div>',
    );
    expect(await keyCount(slug)).toBe(0);
  });

  it('refuses a viewer', async () => {
    const { slug, id } = await workspace();
    await simulatorProvider(id, 'viewer-sim');
    const viewer = await signedIn(slug, 'viewer');
    const refused = await viewer.post(`/console/w/${slug}/developer/api-keys`, {
      abilities: 'messages:send',
      routing: 'provider:viewer-sim',
    });
    expect(refused.status).toBe(403);
    expect(visibleText(refused.body)).toContain('Not allowed');
    expect(await keyCount(slug)).toBe(0);
  });
});

describe('API key rate limit', () => {
  const rates = (workspaceId: number) =>
    server.sql<{ name: string; rateLimit: unknown }[]>`
      select name, rate_limit from api_keys where workspace_id = ${workspaceId} order by id`;

  it("saves a key's own rate (blank: the workspace's key rate), refuses an unreadable one at its field, and audits it", async () => {
    const { slug, id } = await workspace();
    const browser = await signedIn(slug, 'developer');
    const form = await browser.get(`/console/w/${slug}/developer/api-keys`);
    expect(form.body).toContain(
      '<input id="rate" name="rate" type="text" maxlength="20" value="" placeholder="100/s">',
    );
    const refused = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Hourly',
      abilities: 'messages:send',
      rate: '100/h',
    });
    expect(refused.status).toBe(422);
    expect(
      visibleText(/<div class="field-error">([^<]*)<\/div>/.exec(refused.body)?.[1] ?? ''),
    ).toBe(
      'Rate limit "100/h" must be requests per second or minute, like 100/s or 6000/m, off, or default',
    );
    expect(refused.body).toContain('value="100/h"');
    expect(await keyCount(slug)).toBe(0);

    for (const [name, rate] of [
      ['Slow', '2/m'],
      ['Unlimited', 'off'],
      ['Usual', ''],
    ] as const) {
      const created = await browser.post(`/console/w/${slug}/developer/api-keys`, {
        name,
        abilities: 'messages:read',
        rate,
      });
      expect(created.status).toBe(201);
      expect(
        visibleText(/<p class="muted">(Prefix[\s\S]*?)<\/p>/.exec(created.body)?.[1] ?? ''),
      ).toMatch(
        new RegExp(
          `rate ${{ Slow: '2/m', Unlimited: 'off', Usual: "the workspace's key rate \\(100/s\\)" }[name]}$`,
        ),
      );
    }
    expect(await rates(id)).toEqual([
      { name: 'Slow', rateLimit: { requests: 2, perSeconds: 60 } },
      { name: 'Unlimited', rateLimit: 'off' },
      { name: 'Usual', rateLimit: null },
    ]);
    const [audit] = await server.sql<{ details: Record<string, unknown> }[]>`
      select details from audit_log
      where workspace_id = ${id} and action = 'api_key.created' order by id limit 1`;
    expect(audit?.details.rate).toBe('2/m');

    // The key's own rate holds over REST: 2 a minute, the third refused.
    const slow = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Slow again',
      abilities: 'messages:read',
      rate: '2/m',
    });
    const token = newToken(slow.body);
    const look = () =>
      server.app.inject({
        method: 'GET',
        url: '/api/v1/messages/999999999',
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await look()).statusCode).toBe(404);
    expect((await look()).statusCode).toBe(404);
    expect((await look()).statusCode).toBe(429);
  });
});
