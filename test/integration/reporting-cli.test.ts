/**
 * The operator commands the MCP reporting feature relies on, run as the real `herald` CLI
 * against the run's Postgres and Temporal: named campaigns (dispatched through the same
 * workflow as REST sends, or left paused when Temporal cannot confirm), members, invitations,
 * the workspace's API entitlement, and MCP connections. Each prints exactly one JSON object;
 * each refusal is a usage error (exit 2) with its exact message.
 */
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { providerCreate, routeCreate } from '../../cli/admin/providers.js';
import { userCreate } from '../../cli/admin/users.js';
import { registerSender } from '../../commands/providers/senders.js';
import { findAccessGrant } from '../../db/oauth-grants.js';
import { keyedHash } from '../../security/tokens.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { freePorts, heraldEnv, runHerald, runHeraldJson } from '../support/processes.js';
import { inbox } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const NOT_APPROVED_FOR_OWN =
  '--sender-id: The selected sender id is not an approved sender of the own provider.';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const simulatorUrl = inject('simulatorUrl');

let stack: Stack;

const cliEnv = (values: Record<string, string | undefined> = {}) =>
  heraldEnv({
    DATABASE_URL: inject('databaseUrl'),
    HERALD_SECRET: inject('secret'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    ...values,
  });

/** Runs the command with --json; it must succeed, and its one JSON object is returned. */
async function herald(args: string[], env = cliEnv()): Promise<Record<string, unknown>> {
  const result = await runHeraldJson(args, env);
  expect(result.code, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.json;
}

/** Each command must be refused with exit code 2 and exactly its usage error (a few at a time). */
async function expectRefusals(cases: [args: string[], message: string][]): Promise<void> {
  const results: Awaited<ReturnType<typeof runHeraldJson>>[] = [];
  let next = 0;
  const runner = async () => {
    for (let index = next++; index < cases.length; index = next++)
      results[index] = await runHeraldJson((cases[index] as [string[], string])[0], cliEnv());
  };
  await Promise.all(Array.from({ length: 3 }, runner));
  for (const [index, [args, message]] of cases.entries()) {
    const result = results[index];
    expect(
      { args, code: result?.code, json: result?.json },
      `herald ${args.join(' ')}\n${result?.stderr}`,
    ).toEqual({ args, code: 2, json: { error: { type: 'UsageError', message } } });
  }
}

const issued = new Set<string>();
/** Fresh Australian mobiles under +61488, a prefix no other test draws from. */
function mobiles(count: number): string[] {
  const result: string[] = [];
  while (result.length < count) {
    const number = `+61488${String(randomInt(1_000_000)).padStart(6, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    result.push(number);
  }
  return result;
}

async function campaignRow(id: number) {
  const [row] = await stack.sql`
    select source, name, api_key_id, status, purpose, body, sender_id, routing_type,
           provider_slug, failover_route_slug, requested_recipients
    from campaigns where id = ${id}`;
  return row;
}

async function waitForCampaign(id: number, status: string) {
  await expect
    .poll(async () => (await campaignRow(id))?.status, { timeout: 30_000, interval: 100 })
    .toBe(status);
}

/** Each number received `body` exactly once. */
async function expectDeliveredOnce(recipients: string[], body: string) {
  for (const to of recipients) {
    await expect.poll(async () => (await inbox(simulatorUrl, to)).length).toBe(1);
    expect((await inbox(simulatorUrl, to)).map((message) => message.body)).toEqual([body]);
  }
}

beforeAll(async () => {
  stack = await openStack();
});

afterAll(async () => {
  await stack?.close();
});

describe('herald campaign create', () => {
  let tenant: Tenant;

  beforeAll(async () => {
    tenant = await createTenant(stack.admin);
    const workspace = tenant.slug;
    for (const [slug, requires] of [
      ['sim', false],
      ['strict', true],
    ] as const) {
      await providerCreate(stack.admin, {
        workspace,
        slug,
        type: 'simulator',
        'base-url': simulatorUrl,
        ...(requires && { 'requires-sender-id': true }),
      });
    }
    await routeCreate(stack.admin, { workspace, slug: 'main', providers: 'sim,own' });
    await registerSender(
      stack.admin,
      { workspace, provider: 'own', sender: 'Acme' },
      TEST_OPERATOR,
    );
    await registerSender(
      stack.admin,
      {
        workspace,
        provider: 'own',
        sender: 'Pending',
        approved: false,
      },
      TEST_OPERATOR,
    );
  });

  it('refuses a sender through own the operator has not approved, and saves nothing', async () => {
    const [valid] = mobiles(1) as [string];
    const send = (...rest: string[]) => [
      ...['campaign', 'create', '--workspace', tenant.slug, '--name', 'Spoofed'],
      ...['--recipients', valid, '--body', 'Your account is locked', ...rest],
    ];
    await expectRefusals([
      [send('--sender-id', 'CommBank'), NOT_APPROVED_FOR_OWN],
      [send('--sender-id', 'Pending'), NOT_APPROVED_FOR_OWN],
      [send('--failover-route', 'main', '--sender-id', 'CommBank'), NOT_APPROVED_FOR_OWN],
    ]);
    const [count] = await stack.sql`
      select count(*)::int as count from campaigns
      where workspace_id = ${tenant.workspaceId} and name = 'Spoofed'`;
    expect(count?.count).toBe(0);
  });

  it('sends from a sender the operator approved for own', async () => {
    const recipients = mobiles(1);
    const created = await herald([
      ...['campaign', 'create', '--workspace', tenant.slug, '--name', 'Branded'],
      ...['--recipients', recipients.join(','), '--body', 'From Acme', '--sender-id', 'Acme'],
    ]);
    await waitForCampaign(created.id as number, 'completed');
    await expectDeliveredOnce(recipients, 'From Acme');
    expect((await inbox(simulatorUrl, recipients[0] as string))[0]?.from).toBe('Acme');
  });

  it('saves a named campaign, runs its workflow to completion and sends each recipient once', async () => {
    const recipients = mobiles(3);
    const created = await herald([
      'campaign',
      'create',
      '--workspace',
      tenant.slug,
      '--name',
      'Spring launch',
      '--recipients',
      recipients.join(','),
      '--body',
      'Spring is here',
    ]);
    expect(created).toEqual({ id: expect.any(Number), status: 'queued' });
    const id = created.id as number;
    await waitForCampaign(id, 'completed');
    await expectDeliveredOnce(recipients, 'Spring is here');
    expect(await campaignRow(id)).toEqual({
      source: 'campaign',
      name: 'Spring launch',
      apiKeyId: null,
      status: 'completed',
      purpose: 'transactional',
      body: 'Spring is here',
      senderId: null,
      routingType: 'direct',
      providerSlug: 'own',
      failoverRouteSlug: null,
      requestedRecipients: 3,
    });
    const messages = await stack.sql`
      select status from campaign_messages where campaign_id = ${id} order by seq`;
    expect(messages.map((row) => row.status)).toEqual(['sent', 'sent', 'sent']);
    const [workflow] = await stack.sql`select workflow_id from campaigns where id = ${id}`;
    expect(workflow?.workflowId).toBe(`campaign/${tenant.workspaceId}/id-${id}`);
  });

  it('routes by --failover-route or --provider, with --purpose and --sender-id', async () => {
    const [viaRoute, viaProvider] = [mobiles(2), mobiles(1)];
    const base = ['campaign', 'create', '--workspace', tenant.slug];
    const [routed, direct] = await Promise.all([
      herald([
        ...base,
        ...['--name', 'Routed', '--recipients', viaRoute.join(','), '--body', 'Sale {opt_out_url}'],
        ...['--purpose', 'marketing', '--failover-route', 'main'],
      ]),
      herald([
        ...base,
        ...['--name', 'Strict', '--recipients', viaProvider.join(','), '--body', 'Hello'],
        ...['--provider', 'strict', '--sender-id', 'Herald'],
      ]),
    ]);
    for (const created of [routed, direct])
      expect(created).toEqual({ id: expect.any(Number), status: 'queued' });
    await waitForCampaign(routed.id as number, 'completed');
    await waitForCampaign(direct.id as number, 'completed');
    expect(await campaignRow(routed.id as number)).toMatchObject({
      purpose: 'marketing',
      routingType: 'failover',
      providerSlug: null,
      failoverRouteSlug: 'main',
    });
    expect(await campaignRow(direct.id as number)).toMatchObject({
      senderId: 'Herald',
      routingType: 'direct',
      providerSlug: 'strict',
    });
    await expectDeliveredOnce(viaProvider, 'Hello');
    for (const to of viaRoute)
      await expect.poll(async () => (await inbox(simulatorUrl, to)).length).toBe(1);
  });

  it("without TEMPORAL_ADDRESS, dispatches to the launcher's dev server on TEMPORAL_DEV_PORT", async () => {
    const recipients = mobiles(1);
    const port = inject('temporalAddress').split(':').at(-1) as string;
    // A data directory no `herald start` runs on: its stack file would come before the port.
    const env = cliEnv({
      TEMPORAL_ADDRESS: undefined,
      TEMPORAL_DEV_PORT: port,
      HERALD_DATA_DIR: join(tmpdir(), `herald-no-stack-${randomUUID()}`),
    });
    const created = await herald(
      ['campaign', 'create', '--workspace', tenant.slug, '--name', 'Local'].concat([
        '--recipients',
        recipients.join(','),
        '--body',
        'Local dev',
      ]),
      env,
    );
    expect(created).toEqual({ id: expect.any(Number), status: 'queued' });
    await waitForCampaign(created.id as number, 'completed');
    await expectDeliveredOnce(recipients, 'Local dev');
  });

  it('keeps the REST send as it was: source api, no name, the key recorded', async () => {
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipients: mobiles(1), message: 'Via the API' },
    });
    expect(response.statusCode).toBe(202);
    const id = response.json().data.message.id as number;
    const row = await campaignRow(id);
    expect({ source: row?.source, name: row?.name, hasKey: row?.apiKeyId !== null }).toEqual({
      source: 'api',
      name: null,
      hasKey: true,
    });
  });

  it('stays paused when Temporal cannot confirm the dispatch, and `campaign resume` sends it', async () => {
    const recipients = mobiles(2);
    const [closedPort] = (await freePorts(1)) as [number];
    const unreachable = cliEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` });
    const args = ['campaign', 'create', '--workspace', tenant.slug, '--name', 'Delayed'];
    const create = [...args, '--recipients', recipients.join(','), '--body', 'Later'];
    // Without --json it says so, why, and how to resume, on stdout; exit code 1 either way: the
    // campaign is saved but not sent, which a script must not take for success.
    const [paused, human] = await Promise.all([
      runHeraldJson(create, unreachable),
      runHerald([...args, '--recipients', mobiles(1).join(','), '--body', 'Later'], unreachable),
    ]);
    expect({ code: paused.code, json: paused.json }).toEqual({
      code: 1,
      json: { id: expect.any(Number), status: 'paused' },
    });
    const id = paused.json.id as number;
    expect(await campaignRow(id)).toMatchObject({ status: 'paused', source: 'campaign' });
    // Kept from the worker's sweeper, which would dispatch it 10 s after its save: here `campaign
    // resume` is what sends it.
    await stack.sql`update campaigns set created_at = now() + interval '1 hour' where id = ${id}`;
    // Saved with the workflow that `campaign resume` starts: never a campaign without a dispatch.
    const [saved] = await stack.sql`select workflow_id from campaigns where id = ${id}`;
    expect(saved?.workflowId).toBe(`campaign/${tenant.workspaceId}/id-${id}`);
    for (const to of recipients) expect(await inbox(simulatorUrl, to)).toEqual([]);
    expect(human.code, human.stderr).toBe(1);
    const humanId = /^Campaign (\d+) /.exec(human.stdout)?.[1];
    expect(human.stdout).toBe(
      `Campaign ${humanId} "Delayed" is saved in ${tenant.slug} but not dispatched, so it stays ` +
        `paused. Temporal at 127.0.0.1:${closedPort} (TEMPORAL_ADDRESS) did not confirm its ` +
        "dispatch. Herald's workers dispatch it once they reach Temporal; to dispatch it yourself " +
        'then, run:\n' +
        `  herald campaign resume --workspace ${tenant.slug} --id ${humanId}\n`,
    );

    const resumeArgs = ['campaign', 'resume', '--workspace', tenant.slug, '--id', String(id)];
    expect(await herald(resumeArgs)).toEqual({ id, status: 'queued' });
    await waitForCampaign(id, 'completed');
    await expectDeliveredOnce(recipients, 'Later');
    await expectRefusals([[resumeArgs, `Campaign ${id} is completed, not paused`]]);
  });

  it('refuses what the REST send refuses, naming the option', async () => {
    const [valid] = mobiles(1) as [string];
    const base = ['campaign', 'create', '--workspace', tenant.slug, '--name', 'Bad'];
    const send = (recipients: string, body: string, ...rest: string[]) => [
      ...base,
      '--recipients',
      recipients,
      '--body',
      body,
      ...rest,
    ];
    const api = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: { recipients: [valid], message: 'API' },
    });
    const apiCampaign = api.json().data.message.id as number;
    await waitForCampaign(apiCampaign, 'completed');
    await expectRefusals([
      [
        ['campaign', 'create', '--workspace', 'no-such-ws', '--name', 'x'],
        'No workspace has the slug "no-such-ws"',
      ],
      [['campaign', 'create', '--workspace', tenant.slug], '--name is required'],
      [[...base, '--body', 'Hi'], '--recipients is required'],
      [[...base, '--recipients', valid], '--body is required'],
      [
        ['campaign', 'create', '--workspace', tenant.slug, '--name', 'n'.repeat(201)],
        '--name must be at most 200 characters',
      ],
      [
        send(`${valid},0412`, 'Hi'),
        'Line 2 of --recipients: the number must be a valid E.164 phone number.',
      ],
      [
        send(`${valid},${valid}`, 'Hi'),
        'Line 2 of --recipients: the number has a duplicate value.',
      ],
      [
        send(valid, 'Hi', '--purpose', 'promotional'),
        '--purpose: The selected message purpose is invalid.',
      ],
      [
        send(valid, 'Stop: {opt_out_url}'),
        '--body: The message field may only contain {opt_out_url} when the message purpose is marketing.',
      ],
      [
        send(valid, 'x'.repeat(1601)),
        '--body: The message field must not be greater than 1600 characters.',
      ],
      [
        send(valid, 'Hi', '--sender-id', 'Way-too-long-sender'),
        '--sender-id: The sender id field must not be greater than 11 characters.; ' +
          '--sender-id: The sender id field must only contain letters, numbers, and spaces.',
      ],
      [
        send(valid, 'Hi', '--provider', 'sim', '--failover-route', 'main'),
        '--provider and --failover-route are exclusive',
      ],
      [
        send(valid, 'Hi', '--provider', 'ghost'),
        `--provider "ghost" is not a provider of ${tenant.slug}`,
      ],
      [
        send(valid, 'Hi', '--failover-route', 'nowhere'),
        `--failover-route "nowhere" is not a failover route of ${tenant.slug}`,
      ],
      [
        send(valid, 'Hi', '--provider', 'strict'),
        '--sender-id: The sender id field is required for the selected provider.',
      ],
      [
        ['campaign', 'resume', '--workspace', tenant.slug, '--id', '0'],
        '--id "0" is not a campaign id',
      ],
      [
        ['campaign', 'resume', '--workspace', tenant.slug, '--id', '999999999'],
        `${tenant.slug} has no campaign 999999999`,
      ],
      [
        ['campaign', 'resume', '--workspace', tenant.slug, '--id', String(apiCampaign)],
        `Campaign ${apiCampaign} is completed, not paused`,
      ],
    ]);
    // Only the API send reached the number.
    await expect.poll(async () => (await inbox(simulatorUrl, valid)).length).toBe(1);
  });
});

describe('herald member list|update|remove', () => {
  let tenant: Tenant;
  const owner = () => `owner@${tenant.slug}.test`;
  const dev = () => `dev@${tenant.slug}.test`;
  const member = (overrides: Record<string, unknown>) => ({
    user_id: expect.any(Number),
    email: dev(),
    role: 'developer',
    permissions: ['developer_tools.read', 'campaigns.read', 'messages.read', 'reports.read'],
    status: 'active',
    ...overrides,
  });
  const update = (...rest: string[]) =>
    herald(['member', 'update', '--workspace', tenant.slug, '--email', dev(), ...rest]);

  beforeAll(async () => {
    tenant = await createTenant(stack.admin);
    await userCreate(stack.admin, {
      workspace: tenant.slug,
      email: owner(),
      password: 'correct horse 1',
      role: 'owner',
    });
  });

  it('lists every member with role, permissions and status', async () => {
    expect(await herald(['member', 'list', '--workspace', tenant.slug])).toEqual({
      members: [
        member({ user_id: tenant.userId }),
        member({
          email: owner(),
          role: 'owner',
          permissions: [
            'developer_tools.read',
            'campaigns.read',
            'messages.read',
            'reports.read',
            'members.read',
            'recipients.read',
          ],
        }),
      ],
    });
  });

  it('changes role (resetting permissions), permissions and status', async () => {
    expect(await update('--role', 'viewer')).toEqual(
      member({ role: 'viewer', permissions: ['campaigns.read', 'reports.read'] }),
    );
    expect(
      await update('--grant', 'members.read,developer_tools.read', '--revoke', 'reports.read'),
    ).toEqual(
      member({
        role: 'viewer',
        permissions: ['developer_tools.read', 'campaigns.read', 'members.read'],
      }),
    );
    expect(await update('--permissions', 'reports.read,campaigns.read')).toEqual(
      member({ role: 'viewer', permissions: ['campaigns.read', 'reports.read'] }),
    );
    expect(await update('--role', 'admin', '--permissions', 'developer_tools.read')).toEqual(
      member({ role: 'admin', permissions: ['developer_tools.read'] }),
    );
    expect(await update('--permissions', '', '--status', 'suspended')).toEqual(
      member({ role: 'admin', permissions: [], status: 'suspended' }),
    );
    expect(await update('--role', 'developer', '--status', 'active')).toEqual(member({}));
    const [row] = await stack.sql`
      select role, permissions, status from workspace_members
      where workspace_id = ${tenant.workspaceId} and user_id = ${tenant.userId}`;
    expect(row).toEqual({
      role: 'developer',
      permissions: ['developer_tools.read', 'campaigns.read', 'messages.read', 'reports.read'],
      status: 'active',
    });
  });

  it('refuses unknown values, conflicting options and leaving no active owner', async () => {
    const base = ['member', 'update', '--workspace', tenant.slug, '--email'];
    const all =
      'developer_tools.read, campaigns.read, messages.read, reports.read, members.read, recipients.read';
    await expectRefusals([
      [[...base, dev()], 'Give at least one of --role, --permissions, --grant, --revoke, --status'],
      [[...base, dev(), '--role', 'boss'], '--role must be one of owner, admin, developer, viewer'],
      [
        [...base, dev(), '--permissions', 'campaigns.read,billing.write'],
        `--permissions must be a comma-separated list of ${all} (unknown: billing.write)`,
      ],
      [[...base, dev(), '--grant', ''], `--grant must be a comma-separated list of ${all}`],
      [
        [...base, dev(), '--permissions', 'campaigns.read', '--grant', 'members.read'],
        '--permissions and --grant / --revoke are exclusive',
      ],
      [
        [...base, dev(), '--grant', 'members.read', '--revoke', 'members.read'],
        '--grant and --revoke both name members.read',
      ],
      [[...base, dev(), '--status', 'gone'], '--status must be one of active, suspended'],
      [
        [...base, 'nobody@example.test', '--role', 'viewer'],
        `nobody@example.test is not a member of ${tenant.slug}`,
      ],
      [
        [...base, owner(), '--role', 'admin'],
        `${owner()} is the only active owner of ${tenant.slug}; make another member owner first`,
      ],
      [
        [...base, owner(), '--status', 'suspended'],
        `${owner()} is the only active owner of ${tenant.slug}; make another member owner first`,
      ],
      [
        ['member', 'remove', '--workspace', tenant.slug, '--email', owner()],
        `${owner()} is the only active owner of ${tenant.slug}; make another member owner first`,
      ],
      [
        ['member', 'remove', '--workspace', tenant.slug, '--email', 'nobody@example.test'],
        `nobody@example.test is not a member of ${tenant.slug}`,
      ],
      [['member', 'list', '--workspace', 'no-such-ws'], 'No workspace has the slug "no-such-ws"'],
    ]);
  });

  it('removes a member and revokes their MCP connections to the workspace', async () => {
    const other = await createTenant(stack.admin);
    const client = await insertClient('Removal client');
    const here = await insertConnection(tenant.workspaceId, tenant.userId, client);
    const elsewhere = await insertConnection(other.workspaceId, tenant.userId, client);
    const tokens = await insertTokens(here);
    expect(
      await herald(['member', 'remove', '--workspace', tenant.slug, '--email', dev()]),
    ).toEqual({ removed: true });
    expect(await herald(['member', 'list', '--workspace', tenant.slug])).toEqual({
      members: [expect.objectContaining({ email: owner() })],
    });
    expect(await connectionRevoked(here)).toBe(true);
    expect(await connectionRevoked(elsewhere)).toBe(false);
    for (const token of tokens) expect(await tokenRevoked(token)).toBe(true);
  });
});

describe('herald invite create|list|revoke', () => {
  let tenant: Tenant;
  const create = (email: string, ...rest: string[]) =>
    herald(['invite', 'create', '--workspace', tenant.slug, '--email', email, ...rest]);

  beforeAll(async () => {
    tenant = await createTenant(stack.admin);
  });

  it('creates an invitation, storing only the keyed hash of the printed token', async () => {
    const before = Date.now();
    const invite = await create('new@example.test');
    expect(invite).toEqual({
      id: expect.any(Number),
      expires_at: expect.stringMatching(ISO),
      token: expect.stringMatching(/^hli_[A-Za-z0-9_-]{43}$/),
    });
    const expiresAt = Date.parse(invite.expires_at as string);
    const week = 7 * 24 * 3600 * 1000;
    expect(expiresAt).toBeGreaterThanOrEqual(before + week - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + week + 1000);
    const [row] = await stack.sql`
      select workspace_id, email, role, token_hash from invitations where id = ${invite.id as number}`;
    expect(row).toEqual({
      workspaceId: tenant.workspaceId,
      email: 'new@example.test',
      role: 'developer',
      tokenHash: keyedHash(inject('secret'), 'invitation-hash', invite.token as string),
    });

    const short = await create('viewer@example.test', '--role', 'viewer', '--expires-in-days', '1');
    const [shortRow] = await stack.sql`
      select role, extract(epoch from expires_at - created_at)::int as lifetime
      from invitations where id = ${short.id as number}`;
    expect(shortRow).toEqual({ role: 'viewer', lifetime: 24 * 3600 });
  });

  it('lists invitations as pending, accepted, revoked or expired', async () => {
    const other = await createTenant(stack.admin);
    const make = async (email: string, role = 'developer') =>
      (
        await herald([
          'invite',
          'create',
          ...['--workspace', other.slug, '--email', email, '--role', role],
        ])
      ).id as number;
    const pending = await make('pending@example.test', 'admin');
    const [accepted, revoked, expired] = await Promise.all([
      make('accepted@example.test'),
      make('revoked@example.test'),
      make('expired@example.test', 'viewer'),
    ]);
    await stack.sql`update invitations set accepted_at = now() where id = ${accepted}`;
    await stack.sql`update invitations set expires_at = now() - interval '1 minute' where id = ${expired}`;
    expect(await herald(['invite', 'revoke', '--id', String(revoked)])).toEqual({ revoked: true });
    const listed = await herald(['invite', 'list', '--workspace', other.slug]);
    const invite = (id: number, email: string, role: string, status: string) => ({
      id,
      email,
      role,
      status,
      expires_at: expect.stringMatching(ISO),
    });
    expect(listed).toEqual({
      // Oldest first.
      invites: [
        invite(pending, 'pending@example.test', 'admin', 'pending'),
        invite(accepted, 'accepted@example.test', 'developer', 'accepted'),
        invite(revoked, 'revoked@example.test', 'developer', 'revoked'),
        invite(expired, 'expired@example.test', 'viewer', 'expired'),
      ].sort((a, b) => a.id - b.id),
    });
    // An expired or revoked invitation no longer blocks a new one.
    expect(await make('expired@example.test')).toEqual(expect.any(Number));
    expect(await make('revoked@example.test')).toEqual(expect.any(Number));

    await expectRefusals([
      [['invite', 'revoke', '--id', String(revoked)], `Invitation ${revoked} is already revoked`],
      [
        ['invite', 'revoke', '--id', String(accepted)],
        `Invitation ${accepted} was already accepted`,
      ],
      [['invite', 'revoke', '--id', '999999999'], 'No invitation has the id 999999999'],
      [['invite', 'revoke', '--id', 'abc'], '--id "abc" is not an invitation id'],
      [['invite', 'revoke'], '--id is required'],
      [
        ['invite', 'create', '--workspace', other.slug, '--email', 'pending@example.test'],
        `pending@example.test already has a pending invitation to ${other.slug} (id ${pending}); revoke it to invite again`,
      ],
      [
        ['invite', 'create', '--workspace', other.slug, '--email', `DEV@${other.slug}.test`],
        `DEV@${other.slug}.test is already a member of ${other.slug}`,
      ],
      [
        ['invite', 'create', '--workspace', other.slug, '--email', 'not-an-email'],
        '--email "not-an-email" is not an email address',
      ],
      [
        [
          'invite',
          'create',
          '--workspace',
          other.slug,
          '--email',
          'a@example.test',
          '--role',
          'god',
        ],
        '--role must be one of owner, admin, developer, viewer',
      ],
      ...['0', '31', '1.5'].map(
        (days) =>
          [
            [
              'invite',
              'create',
              ...[
                '--workspace',
                other.slug,
                '--email',
                'a@example.test',
                '--expires-in-days',
                days,
              ],
            ],
            '--expires-in-days must be an integer from 1 to 30',
          ] as [string[], string],
      ),
      [['invite', 'list', '--workspace', 'no-such-ws'], 'No workspace has the slug "no-such-ws"'],
    ]);
  });
});

describe('herald workspace update', () => {
  it('renames the workspace and sets its API entitlement', async () => {
    const tenant = await createTenant(stack.admin);
    const lookup = () =>
      stack.app.inject({
        method: 'GET',
        url: '/api/v1/messages/1',
        headers: { authorization: `Bearer ${tenant.token}` },
      });
    const base = ['workspace', 'update', '--slug', tenant.slug];
    expect(await herald([...base, '--api-enabled', 'false'])).toEqual({
      id: tenant.workspaceId,
      slug: tenant.slug,
      name: `Tenant ${tenant.slug}`,
      api_enabled: false,
      help_text: null,
      quiet_hours: null,
    });
    expect((await lookup()).statusCode).toBe(401);
    expect(await herald([...base, '--name', 'Renamed Co', '--api-enabled', 'true'])).toEqual({
      id: tenant.workspaceId,
      slug: tenant.slug,
      name: 'Renamed Co',
      api_enabled: true,
      help_text: null,
      quiet_hours: null,
    });
    expect((await lookup()).statusCode).toBe(404);
    expect(await herald([...base, '--name', 'Only the name'])).toEqual({
      id: tenant.workspaceId,
      slug: tenant.slug,
      name: 'Only the name',
      api_enabled: true,
      help_text: null,
      quiet_hours: null,
    });

    await expectRefusals([
      [base, 'Give at least one of --name, --api-enabled, --help-text, --quiet-hours'],
      [[...base, '--api-enabled', 'yes'], '--api-enabled must be true or false, not "yes"'],
      [[...base, '--name', 'n'.repeat(201)], '--name must be at most 200 characters'],
      [
        ['workspace', 'update', '--slug', 'no-such-ws', '--name', 'x'],
        'No workspace has the slug "no-such-ws"',
      ],
      [['workspace', 'update', '--name', 'x'], '--slug is required'],
    ]);
  });
});

async function insertClient(name: string): Promise<string> {
  const id = `client-${randomUUID()}`;
  await stack.sql`
    insert into oauth_clients (id, name, redirect_uris, token_endpoint_auth_method)
    values (${id}, ${name}, ${['http://127.0.0.1:9999/callback']}, 'none')`;
  return id;
}

async function insertConnection(workspaceId: number, userId: number, clientId: string) {
  const [row] = await stack.sql<{ id: number }[]>`
    insert into oauth_connections (workspace_id, user_id, client_id, scope)
    values (${workspaceId}, ${userId}, ${clientId}, 'mcp:use') returning id`;
  return (row as { id: number }).id;
}

/** An access and a refresh token of the connection; the hashes are returned. */
async function insertTokens(connectionId: number): Promise<Buffer[]> {
  const family = randomUUID();
  const hashes = [randomBytes(32), randomBytes(32)];
  for (const [index, kind] of (['access', 'refresh'] as const).entries()) {
    await stack.sql`
      insert into oauth_tokens (token_hash, kind, connection_id, family, resource, scope, expires_at)
      values (${hashes[index] as Buffer}, ${kind}, ${connectionId}, ${family},
              'http://herald.test/mcp', 'mcp:use', now() + interval '1 hour')`;
  }
  return hashes;
}

async function connectionRevoked(id: number) {
  const [row] = await stack.sql`select revoked_at from oauth_connections where id = ${id}`;
  return row?.revokedAt instanceof Date;
}

async function tokenRevoked(hash: Buffer) {
  const [row] = await stack.sql`select revoked_at from oauth_tokens where token_hash = ${hash}`;
  return row?.revokedAt instanceof Date;
}

describe('herald mcp connections list|revoke', () => {
  let first: Tenant;
  let second: Tenant;
  let clientId: string;
  let connections: { own: number; colleague: number; elsewhere: number };
  let colleagueEmail: string;

  beforeAll(async () => {
    [first, second] = await Promise.all([createTenant(stack.admin), createTenant(stack.admin)]);
    colleagueEmail = `colleague@${first.slug}.test`;
    const colleague = (
      await userCreate(stack.admin, {
        workspace: first.slug,
        email: colleagueEmail,
        password: 'correct horse 1',
      })
    ).json.id as number;
    clientId = await insertClient('Claude');
    connections = {
      own: await insertConnection(first.workspaceId, first.userId, clientId),
      colleague: await insertConnection(first.workspaceId, colleague, clientId),
      elsewhere: await insertConnection(second.workspaceId, second.userId, clientId),
    };
    await stack.sql`update oauth_connections set last_used_at = now() where id = ${connections.own}`;
  });

  const listed = (id: number, workspace: string, user: string, used = false) => ({
    id,
    workspace,
    user,
    client_id: clientId,
    client_name: 'Claude',
    scope: 'mcp:use',
    created_at: expect.stringMatching(ISO),
    last_used_at: used ? expect.stringMatching(ISO) : null,
    revoked_at: null,
  });

  it('lists connections, by workspace and by user', async () => {
    const devEmail = `dev@${first.slug}.test`;
    expect(await herald(['mcp', 'connections', 'list', '--workspace', first.slug])).toEqual({
      connections: [
        listed(connections.own, first.slug, devEmail, true),
        listed(connections.colleague, first.slug, colleagueEmail),
      ],
    });
    expect(await herald(['mcp', 'connections', 'list', '--user', colleagueEmail])).toEqual({
      connections: [listed(connections.colleague, first.slug, colleagueEmail)],
    });
    expect(
      await herald(['mcp', 'connections', 'list', '--workspace', second.slug, '--user', devEmail]),
    ).toEqual({ connections: [] });
    const everything = await herald(['mcp', 'connections', 'list']);
    expect(everything.connections).toEqual(
      expect.arrayContaining([
        listed(connections.elsewhere, second.slug, `dev@${second.slug}.test`),
      ]),
    );
  });

  it('revokes a connection and all its tokens at once', async () => {
    const id = connections.colleague;
    const [access, refresh] = (await insertTokens(id)) as [Buffer, Buffer];
    const [earlier] = (await insertTokens(id)) as [Buffer];
    await stack.sql`
      update oauth_tokens set revoked_at = '2020-01-01T00:00:00Z' where token_hash = ${earlier}`;
    const untouched = await insertTokens(connections.own);
    expect(await findAccessGrant(stack.sql, access)).toBeDefined();

    expect(await herald(['mcp', 'connections', 'revoke', '--id', String(id)])).toEqual({
      revoked: true,
    });
    const [connection] = await stack.sql`
      select revoked_at from oauth_connections where id = ${id}`;
    const revokedAt = connection?.revokedAt as Date;
    expect(revokedAt).toBeInstanceOf(Date);
    const tokens = await stack.sql<{ kind: string; revokedAt: Date | null }[]>`
      select kind, revoked_at from oauth_tokens where connection_id = ${id} and token_hash <> ${earlier}
      order by kind`;
    // One transaction: the connection and its tokens carry the same instant.
    expect(tokens).toEqual([
      { kind: 'access', revokedAt },
      { kind: 'refresh', revokedAt },
      { kind: 'refresh', revokedAt },
    ]);
    const [kept] =
      await stack.sql`select revoked_at from oauth_tokens where token_hash = ${earlier}`;
    expect(kept).toEqual({ revokedAt: new Date('2020-01-01T00:00:00Z') });
    expect(await findAccessGrant(stack.sql, access)).toBeUndefined();
    expect(await tokenRevoked(refresh)).toBe(true);
    for (const token of untouched) expect(await tokenRevoked(token)).toBe(false);

    expect(await herald(['mcp', 'connections', 'list', '--user', colleagueEmail])).toEqual({
      connections: [
        { ...listed(id, first.slug, colleagueEmail), revoked_at: revokedAt.toISOString() },
      ],
    });

    await expectRefusals([
      [
        ['mcp', 'connections', 'revoke', '--id', String(id)],
        `MCP connection ${id} is already revoked`,
      ],
      [
        ['mcp', 'connections', 'revoke', '--id', '999999999'],
        'No MCP connection has the id 999999999',
      ],
      [['mcp', 'connections', 'revoke', '--id', '1.5'], '--id "1.5" is not a connection id'],
      [['mcp', 'connections', 'revoke'], '--id is required'],
      [
        ['mcp', 'connections', 'list', '--user', 'nobody@example.test'],
        'No user has the email "nobody@example.test"',
      ],
      [
        ['mcp', 'connections', 'list', '--workspace', 'no-such-ws'],
        'No workspace has the slug "no-such-ws"',
      ],
      [['mcp', 'connections', 'prune'], 'Unknown command "mcp connections prune"'],
      [['mcp', 'connections'], 'Unknown command "mcp connections"'],
      [
        ['mcp', 'connections', 'list', 'extra'],
        "Unexpected argument 'extra'. This command does not take positional arguments",
      ],
    ]);
  });
});
