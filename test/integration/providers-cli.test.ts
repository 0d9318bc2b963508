import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keyCreate } from '../../cli/admin/keys.js';
import type { Options } from '../../cli/admin/options.js';
import {
  providerCreate,
  providerDisable,
  providerEnable,
  routeCreate,
} from '../../cli/admin/providers.js';
import { UsageError } from '../../cli/output.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
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

describe('herald key create with --provider or --failover-route', () => {
  let workspace: string;
  let workspaceId: number;
  const createKey = (routing: Options) =>
    keyCreate(stack.admin, { workspace, abilities: 'messages:send', ...routing });

  beforeAll(async () => {
    ({ slug: workspace, workspaceId } = await createTenant(stack.admin));
    for (const slug of ['live', 'off']) {
      await providerCreate(stack.admin, {
        workspace,
        slug,
        type: 'simulator',
        'base-url': inject('simulatorUrl'),
      });
    }
    await providerDisable(stack.admin, { workspace, slug: 'off' });
    for (const slug of ['main', 'paused'])
      await routeCreate(stack.admin, { workspace, slug, providers: 'live,own' });
    // No command disables a route yet.
    await stack.sql`
      update failover_routes set enabled = false
      where workspace_id = ${workspaceId} and slug = 'paused'`;
  });

  it('accepts an active provider, `own` and an enabled failover route', async () => {
    for (const routing of [{ provider: 'live' }, { provider: 'own' }, { 'failover-route': 'main' }])
      expect((await createKey(routing)).json).toMatchObject({ token: expect.any(String) });
  });

  it('refuses a provider the workspace does not have', async () => {
    await expect(createKey({ provider: 'ghost' })).rejects.toThrow(
      new UsageError(`--provider "ghost" is not a provider of ${workspace}`),
    );
  });

  it('refuses a disabled provider', async () => {
    await expect(createKey({ provider: 'off' })).rejects.toThrow(
      new UsageError(`--provider "off" is disabled in ${workspace}`),
    );
  });

  it('refuses a failover route the workspace does not have', async () => {
    await expect(createKey({ 'failover-route': 'ghost' })).rejects.toThrow(
      new UsageError(`--failover-route "ghost" is not a failover route of ${workspace}`),
    );
  });

  it('refuses a disabled failover route', async () => {
    await expect(createKey({ 'failover-route': 'paused' })).rejects.toThrow(
      new UsageError(`--failover-route "paused" is disabled in ${workspace}`),
    );
  });

  it('exits 2 with a JSON error naming the option', async () => {
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
    const args = ['key', 'create', '--workspace', workspace, '--abilities', 'messages:send'];
    const result = await runHeraldJson([...args, '--provider', 'ghost'], env);
    expect(result.code, result.stderr).toBe(2);
    expect(result.json).toEqual({
      error: {
        type: 'UsageError',
        message: `--provider "ghost" is not a provider of ${workspace}`,
      },
    });
  });
});

describe('one SMSC account serves one workspace provider', () => {
  const host = 'smsc-shared.example.net';
  const systemId = 'acct-7d2f9';
  const password = 'pw-4k9q';
  let first: Tenant;
  let second: Tenant;
  const smpp = (tenant: Tenant, slug: string, account: Options = {}) =>
    providerCreate(stack.admin, {
      workspace: tenant.slug,
      slug,
      type: 'smpp',
      host,
      port: '2775',
      'system-id': systemId,
      password,
      ...account,
    });
  const sharing = (holder: string, workspace: string) =>
    new UsageError(
      `Provider "${holder}" of workspace ${workspace} already uses this SMSC account (the same --host, --port and --system-id). One SMSC account serves one workspace provider, because receipts and replies are assigned by the bind they arrive on; disable that provider first to move the account.`,
    );
  const smppProviders = async () =>
    (
      await stack.sql<{ workspaceId: number; slug: string; active: boolean }[]>`
        select workspace_id, slug, active from providers
        where type = 'smpp' and settings->>'host' ilike ${host}
        order by id`
    ).map(({ workspaceId, slug, active }) => [workspaceId, slug, active]);

  beforeAll(async () => {
    first = await createTenant(stack.admin);
    second = await createTenant(stack.admin);
    await smpp(first, 'smsc');
  });

  // The run's workers bind every active SMPP provider: leave none pointing at these hosts.
  afterAll(async () => {
    await stack.sql`
      update providers set active = false
      where workspace_id in (${first.workspaceId}, ${second.workspaceId}) and type = 'smpp'`;
  });

  it('refuses a second provider on the same host (any case), port and system id, in any workspace', async () => {
    await expect(smpp(second, 'smsc', { host: host.toUpperCase() })).rejects.toThrow(
      sharing('smsc', first.slug),
    );
    await expect(smpp(first, 'smsc-again')).rejects.toThrow(sharing('smsc', first.slug));
    expect(await smppProviders()).toEqual([[first.workspaceId, 'smsc', true]]);
  });

  it('takes another system id on that host, or that system id on another host or port', async () => {
    await smpp(second, 'other-account', { 'system-id': 'acct-other' });
    await smpp(second, 'other-host', { host: 'smsc-b.example.net' });
    await smpp(second, 'other-port', { port: '3550' });
    expect(await smppProviders()).toEqual([
      [first.workspaceId, 'smsc', true],
      [second.workspaceId, 'other-account', true],
      [second.workspaceId, 'other-port', true],
    ]);
  });

  it('lets the account move once its provider is disabled, and then refuses to enable the old one', async () => {
    await providerDisable(stack.admin, { workspace: first.slug, slug: 'smsc' });
    expect((await smpp(second, 'smsc')).json).toEqual({ id: expect.any(Number), slug: 'smsc' });
    await expect(
      providerEnable(stack.admin, { workspace: first.slug, slug: 'smsc' }),
    ).rejects.toThrow(sharing('smsc', second.slug));
    expect(await smppProviders()).toEqual([
      [first.workspaceId, 'smsc', false],
      [second.workspaceId, 'other-account', true],
      [second.workspaceId, 'other-port', true],
      [second.workspaceId, 'smsc', true],
    ]);
  });

  it('exits 2 with the JSON error shape, printing neither the system id nor the password', async () => {
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
    const result = await runHeraldJson(
      [
        'provider',
        'create',
        '--workspace',
        first.slug,
        '--slug',
        'smsc-cli',
        '--type',
        'smpp',
        '--host',
        host,
        '--port',
        '2775',
        '--system-id',
        systemId,
        '--password',
        password,
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.json).toEqual({
      error: { type: 'UsageError', message: sharing('smsc', second.slug).message },
    });
    expect(result.stdout + result.stderr).not.toContain(systemId);
    expect(result.stdout + result.stderr).not.toContain(password);
  });
});
