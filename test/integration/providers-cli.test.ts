import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { providerCreate, providerDisable, routeCreate } from '../../cli/commands/providers.js';
import { UsageError } from '../../cli/output.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
});

afterAll(() => stack.close());

describe('herald provider and route commands', () => {
  it('creates a provider and a failover route over it and `own`', async () => {
    const provider = await providerCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'sim-a',
      type: 'simulator',
      'base-url': inject('simulatorUrl'),
    });
    expect(provider.json).toEqual({ id: expect.any(Number), slug: 'sim-a' });
    const route = await routeCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'main',
      providers: 'sim-a,own',
    });
    expect(route.json).toEqual({
      id: expect.any(Number),
      slug: 'main',
      providers: ['sim-a', 'own'],
    });
  });

  it('refuses a route over a provider the workspace does not have', async () => {
    await expect(
      routeCreate(stack.admin, { workspace: tenant.slug, slug: 'bad', providers: 'sim-a,ghost' }),
    ).rejects.toThrow(new UsageError(`${tenant.slug} has no provider ghost`));
  });

  it('reserves the slug of the operator provider', async () => {
    await expect(
      providerCreate(stack.admin, {
        workspace: tenant.slug,
        slug: 'own',
        type: 'simulator',
        'base-url': 'http://127.0.0.1:1',
      }),
    ).rejects.toThrow(new UsageError('"own" is the operator\'s provider and is reserved'));
  });

  it('stops offering a disabled provider to senders', async () => {
    await providerCreate(stack.admin, {
      workspace: tenant.slug,
      slug: 'sim-b',
      type: 'simulator',
      'base-url': inject('simulatorUrl'),
    });
    await providerDisable(stack.admin, { workspace: tenant.slug, slug: 'sim-b' });
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipients: ['+61412000001'], message: 'Hi', provider_slug: 'sim-b' },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'The selected provider slug is invalid.',
      errors: { provider_slug: ['The selected provider slug is invalid.'] },
    });
  });
});
