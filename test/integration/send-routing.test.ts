/**
 * docs/spec.md §4.1 routing rules on the real stack: a key's routing applies when the request has none,
 * explicit request routing overrides it, and a key without routing uses the own provider. Which
 * provider was used is read from campaign_messages.provider_slug and from the simulators' inboxes.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keyCreate } from '../../cli/admin/keys.js';
import { insertFailoverRoute, insertProvider, setProviderActive } from '../../db/providers.js';
import type { RunningSimulator } from '../../providers/simulator/server.js';
import {
  inbox,
  invalid,
  messageRows,
  numbers,
  postMessages,
  sendQueued,
  simulatorProvider,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const ownUrl = inject('simulatorUrl');
let stack: Stack;
let tenant: Tenant;
let alpha: RunningSimulator;
let beta: RunningSimulator;

/** A key of the tenant's developer with the given routing (`herald key create`). */
async function keyWithRouting(routing: { provider?: string; 'failover-route'?: string }) {
  const result = await keyCreate(stack.admin, {
    workspace: tenant.slug,
    user: `dev@${tenant.slug}.test`,
    abilities: 'messages:send,messages:read',
    ...routing,
  });
  return (result.json as { token: string }).token;
}

/** Sends through `token`, waits for completion; answers which provider and simulator got it. */
async function sendAndTrace(token: string, extra: Record<string, unknown> = {}) {
  const [recipient] = numbers(1) as [string];
  const body = { recipients: [recipient], message: 'Routing check', ...extra };
  const id = await sendQueued(stack, token, body, { total: 1 });
  expect(await waitForCompletion(stack, token, id)).toMatchObject({ sent_count: 1 });
  const [row] = await messageRows(stack, id);
  const [campaign] = await stack.sql<
    { routingType: string; providerSlug: string | null; failoverRouteSlug: string | null }[]
  >`
    select routing_type, provider_slug, failover_route_slug from campaigns where id = ${id}`;
  const inboxes = {
    own: (await inbox(ownUrl, recipient)).length,
    alpha: (await inbox(alpha.url, recipient)).length,
    beta: (await inbox(beta.url, recipient)).length,
  };
  return { usedProvider: row?.providerSlug, campaign, inboxes };
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  alpha = await simulatorProvider(stack, tenant.workspaceId, 'alpha');
  beta = await simulatorProvider(stack, tenant.workspaceId, 'beta');
  // Both point at beta's simulator; `branded` requires a sender id, `retired` gets disabled.
  for (const [slug, requiresSenderId] of [
    ['branded', true],
    ['retired', false],
  ] as const) {
    await insertProvider(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug,
      name: slug,
      type: 'simulator',
      requiresSenderId,
      settings: { base_url: beta.url },
    });
  }
  for (const [slug, providerSlugs] of [
    ['beta-first', ['beta', 'alpha']],
    ['switched-off', ['alpha']],
  ] as const) {
    await insertFailoverRoute(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug,
      name: slug,
      providerSlugs: [...providerSlugs],
    });
  }
});

afterAll(async () => {
  await alpha?.close();
  await beta?.close();
  await stack?.close();
});

describe('routing (docs/spec.md §4.1 routing rules)', () => {
  it('rule 1: a key without routing uses the own provider', async () => {
    expect(await sendAndTrace(tenant.token)).toEqual({
      usedProvider: 'own',
      campaign: { routingType: 'direct', providerSlug: 'own', failoverRouteSlug: null },
      inboxes: { own: 1, alpha: 0, beta: 0 },
    });
  });

  it("rule 1: a key's own provider applies when the request names none", async () => {
    const token = await keyWithRouting({ provider: 'alpha' });
    expect(await sendAndTrace(token)).toEqual({
      usedProvider: 'alpha',
      campaign: { routingType: 'direct', providerSlug: 'alpha', failoverRouteSlug: null },
      inboxes: { own: 0, alpha: 1, beta: 0 },
    });
  });

  it("rule 1: a key's failover route applies when the request names none", async () => {
    const token = await keyWithRouting({ 'failover-route': 'beta-first' });
    expect(await sendAndTrace(token)).toEqual({
      usedProvider: 'beta',
      campaign: { routingType: 'failover', providerSlug: null, failoverRouteSlug: 'beta-first' },
      inboxes: { own: 0, alpha: 0, beta: 1 },
    });
  });

  it("rule 2: an explicit provider_slug overrides the key's provider", async () => {
    const token = await keyWithRouting({ provider: 'alpha' });
    expect(await sendAndTrace(token, { provider_slug: 'beta' })).toEqual({
      usedProvider: 'beta',
      campaign: { routingType: 'direct', providerSlug: 'beta', failoverRouteSlug: null },
      inboxes: { own: 0, alpha: 0, beta: 1 },
    });
  });

  it("rule 2: explicit direct routing without a provider selects own over the key's provider", async () => {
    const token = await keyWithRouting({ provider: 'alpha' });
    expect(await sendAndTrace(token, { routing_type: 'direct' })).toEqual({
      usedProvider: 'own',
      campaign: { routingType: 'direct', providerSlug: 'own', failoverRouteSlug: null },
      inboxes: { own: 1, alpha: 0, beta: 0 },
    });
  });

  it("rule 2: an explicit failover route overrides the key's provider", async () => {
    const token = await keyWithRouting({ provider: 'alpha' });
    const routed = await sendAndTrace(token, {
      routing_type: 'failover',
      failover_route_slug: 'beta-first',
    });
    expect(routed).toEqual({
      usedProvider: 'beta',
      campaign: { routingType: 'failover', providerSlug: null, failoverRouteSlug: 'beta-first' },
      inboxes: { own: 0, alpha: 0, beta: 1 },
    });
  });

  it("rule 2: an explicit provider overrides the key's failover route", async () => {
    const token = await keyWithRouting({ 'failover-route': 'beta-first' });
    expect(await sendAndTrace(token, { provider_slug: 'alpha' })).toEqual({
      usedProvider: 'alpha',
      campaign: { routingType: 'direct', providerSlug: 'alpha', failoverRouteSlug: null },
      inboxes: { own: 0, alpha: 1, beta: 0 },
    });
  });

  it('a provider that requires a sender id sends with the one given', async () => {
    const [recipient] = numbers(1) as [string];
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [recipient],
        message: 'Branded',
        provider_slug: 'branded',
        sender_id: 'Herald',
      },
      { total: 1 },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({ sent_count: 1 });
    expect((await messageRows(stack, id))[0]?.providerSlug).toBe('branded');
    expect((await inbox(beta.url, recipient)).map(({ from, body }) => ({ from, body }))).toEqual([
      { from: 'Herald', body: 'Branded' },
    ]);
  });

  it("422 names the key as the source when the key's routing became unusable", async () => {
    const toMissingProvider = await keyWithRouting({ provider: 'retired' });
    const toMissingRoute = await keyWithRouting({ 'failover-route': 'switched-off' });
    const toBranded = await keyWithRouting({ provider: 'branded' });
    // Disabled after the keys were created (key create refuses a disabled target).
    await setProviderActive(stack.sql, tenant.workspaceId, 'retired', false);
    await stack.sql`
      update failover_routes set enabled = false
      where workspace_id = ${tenant.workspaceId} and slug = 'switched-off'`;
    const body = { recipients: numbers(1), message: 'Hi' };

    const provider = await postMessages(stack, toMissingProvider, body);
    expect(provider.statusCode).toBe(422);
    expect(provider.json()).toEqual(
      invalid('provider_slug', 'The selected provider slug (from the API key) is invalid.'),
    );
    const route = await postMessages(stack, toMissingRoute, body);
    expect(route.statusCode).toBe(422);
    expect(route.json()).toEqual(
      invalid(
        'failover_route_slug',
        'The selected failover route slug (from the API key) is invalid.',
      ),
    );
    const sender = await postMessages(stack, toBranded, body);
    expect(sender.statusCode).toBe(422);
    expect(sender.json()).toEqual(
      invalid('sender_id', 'The sender id field is required for the selected provider.'),
    );
  });
});
