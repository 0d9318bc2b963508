/**
 * The `list` commands (workspaces, users, keys, providers, routes, OTP services, campaigns):
 * each prints a table, or with --json one object; none prints a secret. Contents are checked on
 * the command functions (what main prints, line for line); the binary is run for the table, the
 * JSON and the one-line errors with the command's own usage.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { campaignCreate, campaignList } from '../../cli/admin/campaigns.js';
import { keyCreate, keyList, keyRevoke } from '../../cli/admin/keys.js';
import { otpServiceCreate, otpServiceList } from '../../cli/admin/otp-services.js';
import {
  providerCreate,
  providerDisable,
  providerList,
  routeCreate,
  routeList,
} from '../../cli/admin/providers.js';
import { userCreate, userList } from '../../cli/admin/users.js';
import { workspaceCreate, workspaceList } from '../../cli/admin/workspaces.js';
import { type AdminContext, operatorActor } from '../../cli/context.js';
import { UsageError } from '../../cli/output.js';
import { sendQuickSend } from '../../commands/messaging/quick-send.js';
import { parseEnv } from '../../config/env.js';
import { columnOf, idColumn } from '../support/cli-table.js';
import { heraldEnv, runHerald, runHeraldJson } from '../support/processes.js';
import { numbers, postMessages } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
/** The admin context of a command that dispatches campaigns (TEMPORAL_ADDRESS set). */
let admin: AdminContext;

const simulatorUrl = inject('simulatorUrl');
const cliEnv = () =>
  heraldEnv({
    DATABASE_URL: inject('databaseUrl'),
    HERALD_SECRET: inject('secret'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
  });
/** A stored time as tables show it: UTC to the second. */
const utc = (iso: unknown) => String(iso).slice(0, 19).replace('T', ' ');
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  admin = {
    ...stack.admin,
    env: parseEnv({
      LOG_LEVEL: 'silent',
      PUBLIC_URL,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    }),
  };
});

afterAll(() => stack?.close());

describe('herald workspace list', () => {
  it('lists every workspace by slug, as a table or as JSON', async () => {
    const slug = `${tenant.slug}-b`;
    const created = (await workspaceCreate(stack.admin, { name: 'Acme Ltd', slug })).json;
    const listed = await workspaceList(stack.admin);
    const workspaces = listed.json.workspaces as Record<string, unknown>[];
    const mine = workspaces.filter((workspace) => String(workspace.slug).startsWith(tenant.slug));
    expect(mine).toEqual([
      {
        id: tenant.workspaceId,
        slug: tenant.slug,
        name: `Tenant ${tenant.slug}`,
        api_enabled: true,
        created_at: ISO,
      },
      { id: created.id, slug, name: 'Acme Ltd', api_enabled: true, created_at: ISO },
    ]);
    expect(workspaces.map((workspace) => workspace.slug)).toEqual(
      workspaces.map((workspace) => workspace.slug).sort(),
    );
    // Other tests' workspaces share the table, so its widths: every row starts its cells where
    // the header's columns start.
    const [header = '', ...rows] = listed.human.split('\n');
    expect(header).toMatch(/^ID +SLUG +NAME +API +CREATED \(UTC\)$/);
    const starts = ['SLUG', 'NAME', 'API', 'CREATED'].map((title) => header.indexOf(title));
    const row = rows.find((line) => line.includes(` ${slug} `)) as string;
    expect(starts.map((start) => row.slice(start).split(/ {2,}/)[0])).toEqual([
      slug,
      'Acme Ltd',
      'enabled',
      utc(mine[1]?.created_at),
    ]);
    expect(row.slice(0, starts[0]).trim()).toBe(String(created.id));
    expect(rows).toHaveLength(workspaces.length);
  });
});

describe('herald user list', () => {
  it("lists the workspace's users by email", async () => {
    const admin2 = (
      await userCreate(stack.admin, {
        workspace: tenant.slug,
        email: `admin@${tenant.slug}.test`,
        password: 'correct horse 2',
        role: 'admin',
      })
    ).json;
    const listed = await userList(stack.admin, { workspace: tenant.slug });
    expect(listed.json).toEqual({
      users: [
        { id: admin2.id, email: `admin@${tenant.slug}.test`, role: 'admin', status: 'active' },
        {
          id: tenant.userId,
          email: `dev@${tenant.slug}.test`,
          role: 'developer',
          status: 'active',
        },
      ],
    });
    const id = idColumn(admin2.id, tenant.userId);
    const email = columnOf('EMAIL', `admin@${tenant.slug}.test`);
    expect(listed.human).toBe(
      [
        `${id('ID')}${email('EMAIL')}ROLE       STATUS`,
        `${id(admin2.id)}${email(`admin@${tenant.slug}.test`)}admin      active`,
        `${id(tenant.userId)}${email(`dev@${tenant.slug}.test`)}developer  active`,
      ].join('\n'),
    );
  });

  it('says when a workspace has none, and refuses an unknown workspace', async () => {
    const slug = `${tenant.slug}-empty`;
    await workspaceCreate(stack.admin, { name: 'Empty', slug });
    expect(await userList(stack.admin, { workspace: slug })).toEqual({
      json: { users: [] },
      human: `${slug} has no users`,
    });
    await expect(userList(stack.admin, { workspace: 'no-such-ws' })).rejects.toThrow(
      new UsageError('No workspace has the slug "no-such-ws"'),
    );
  });
});

describe('herald provider list and route list', () => {
  let workspace: string;

  beforeAll(async () => {
    workspace = (await createTenant(stack.admin)).slug;
  });

  it('says there are none yet', async () => {
    expect(await providerList(stack.admin, { workspace })).toEqual({
      json: { providers: [] },
      human: `${workspace} has no providers of its own (it sends through own)`,
    });
    expect(await routeList(stack.admin, { workspace })).toEqual({
      json: { routes: [] },
      human: `${workspace} has no failover routes`,
    });
  });

  it('lists providers by slug without their settings or credentials, and routes in failover order', async () => {
    const sim = await providerCreate(stack.admin, {
      workspace,
      slug: 'sim-a',
      type: 'simulator',
      'base-url': simulatorUrl,
      'messages-per-second': '20',
    });
    const twilio = await providerCreate(stack.admin, {
      workspace,
      slug: 'tw',
      name: 'Twilio AU',
      type: 'twilio',
      'account-sid': `AC${'0'.repeat(32)}`,
      'auth-token': 'twilio-auth-token-secret',
      from: '+61400000000',
      'requires-sender-id': true,
    });
    await providerDisable(stack.admin, { workspace, slug: 'tw' });
    const route = await routeCreate(stack.admin, {
      workspace,
      slug: 'main',
      name: 'Main route',
      providers: 'tw,sim-a,own',
    });

    const providers = await providerList(stack.admin, { workspace });
    expect(providers.json).toEqual({
      providers: [
        {
          id: sim.json.id,
          slug: 'sim-a',
          name: 'sim-a',
          type: 'simulator',
          active: true,
          requires_sender_id: false,
          messages_per_second: 20,
          created_at: ISO,
        },
        {
          id: twilio.json.id,
          slug: 'tw',
          name: 'Twilio AU',
          type: 'twilio',
          active: false,
          requires_sender_id: true,
          messages_per_second: null,
          created_at: ISO,
        },
      ],
    });
    const [simAt, twAt] = (providers.json.providers as { created_at: string }[]).map((provider) =>
      utc(provider.created_at),
    );
    const id = idColumn(sim.json.id, twilio.json.id);
    expect(providers.human).toBe(
      [
        `${id('ID')}SLUG   NAME       TYPE       STATUS    SENDER ID  MSG/S  CREATED (UTC)`,
        `${id(sim.json.id)}sim-a  sim-a      simulator  active    optional   20     ${simAt}`,
        `${id(twilio.json.id)}tw     Twilio AU  twilio     inactive  required   -      ${twAt}`,
      ].join('\n'),
    );
    expect(`${providers.human}${JSON.stringify(providers.json)}`).not.toMatch(
      /twilio-auth-token-secret|AC0{32}|127\.0\.0\.1|base_url/,
    );

    const routes = await routeList(stack.admin, { workspace });
    expect(routes.json).toEqual({
      routes: [
        {
          id: route.json.id,
          slug: 'main',
          name: 'Main route',
          enabled: true,
          providers: ['tw', 'sim-a', 'own'],
          created_at: ISO,
        },
      ],
    });
    const routeAt = utc((routes.json.routes as { created_at: string }[])[0]?.created_at);
    const routeId = idColumn(route.json.id);
    expect(routes.human).toBe(
      [
        `${routeId('ID')}SLUG  NAME        STATUS   PROVIDERS (IN ORDER)  CREATED (UTC)`,
        `${routeId(route.json.id)}main  Main route  enabled  tw → sim-a → own      ${routeAt}`,
      ].join('\n'),
    );
  });
});

describe('herald key list', () => {
  it('lists live keys first, newest first, by prefix: never a token', async () => {
    const { slug } = tenant;
    await providerCreate(stack.admin, {
      workspace: slug,
      slug: 'sim',
      type: 'simulator',
      'base-url': simulatorUrl,
    });
    const routed = await keyCreate(stack.admin, {
      workspace: slug,
      abilities: 'messages:read',
      name: 'Reports',
      provider: 'sim',
    });
    const revoked = await keyCreate(stack.admin, { workspace: slug, abilities: 'otp:send' });
    await keyRevoke(stack.admin, { id: String(revoked.json.id) });
    const listed = await keyList(stack.admin, { workspace: slug });
    const keys = listed.json.keys as Record<string, unknown>[];
    const first = keys[1] as Record<string, unknown>;
    expect(keys).toEqual([
      {
        id: routed.json.id,
        name: 'Reports',
        prefix: routed.json.prefix,
        abilities: ['messages:read'],
        user_email: null,
        provider_slug: 'sim',
        failover_route_slug: null,
        created_at: ISO,
        last_used_at: null,
        revoked_at: null,
      },
      {
        id: expect.any(Number),
        name: null,
        prefix: expect.stringMatching(/^hld_/),
        abilities: ['messages:send', 'messages:read', 'otp:send', 'otp:verify'],
        user_email: `dev@${slug}.test`,
        provider_slug: null,
        failover_route_slug: null,
        created_at: ISO,
        last_used_at: null,
        revoked_at: null,
      },
      {
        id: revoked.json.id,
        name: null,
        prefix: revoked.json.prefix,
        abilities: ['otp:send'],
        user_email: null,
        provider_slug: null,
        failover_route_slug: null,
        created_at: ISO,
        last_used_at: null,
        revoked_at: ISO,
      },
    ]);
    const id = idColumn(...keys.map((key) => key.id));
    const prefix = columnOf('PREFIX', ...keys.map((key) => key.prefix));
    const user = columnOf('USER', `dev@${slug}.test`);
    const abilities = 'messages:send,messages:read,otp:send,otp:verify';
    const expected = [
      `${id('ID')}${prefix('PREFIX')}NAME     ${user('USER')}ABILITIES${' '.repeat(abilities.length - 7)}ROUTING       LAST USED (UTC)  STATUS`,
      `${id(routed.json.id)}${prefix(routed.json.prefix)}Reports  ${user('-')}messages:read${' '.repeat(abilities.length - 11)}provider sim  -                live`,
      `${id(first.id)}${prefix(first.prefix)}-        ${user(`dev@${slug}.test`)}${abilities}  default       -                live`,
      `${id(revoked.json.id)}${prefix(revoked.json.prefix)}-        ${user('-')}otp:send${' '.repeat(abilities.length - 6)}default       -                revoked ${utc(keys[2]?.revoked_at)}`,
    ];
    expect(listed.human).toBe(expected.join('\n'));

    // The binary prints the same table, and with --json the same object: never a token.
    const run = await runHerald(['key', 'list', '--workspace', slug], cliEnv());
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 0,
      stdout: `${expected.join('\n')}\n`,
      stderr: '',
    });
    const json = await runHeraldJson(['key', 'list', '--workspace', slug], cliEnv());
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toEqual(listed.json);
    for (const token of [tenant.token, routed.json.token, revoked.json.token])
      expect(`${run.stdout}${json.stdout}`).not.toContain(String(token).slice(12));
  });
});

describe('herald otp-service list', () => {
  it('lists the services as the console does, newest first', async () => {
    const workspace = (await createTenant(stack.admin)).slug;
    expect(await otpServiceList(stack.admin, { workspace })).toEqual({
      json: { otp_services: [] },
      human: `${workspace} has no OTP services`,
    });
    const login = await otpServiceCreate(stack.admin, {
      workspace,
      name: 'Login',
      purpose: 'login',
    });
    const reset = await otpServiceCreate(stack.admin, {
      workspace,
      name: 'Reset',
      purpose: 'password_reset',
      'code-length': '8',
      'expires-in-minutes': '3',
      'message-template': 'Reset code {code}',
    });
    const listed = await otpServiceList(stack.admin, { workspace });
    expect(listed.json).toEqual({ otp_services: [reset.json, login.json] });
    const loginBody = login.json.message_template;
    const slug = columnOf('SLUG', login.json.slug);
    const message = columnOf('MESSAGE', loginBody, 'Reset code {code}');
    expect(listed.human).toBe(
      [
        `${slug('SLUG')}NAME   PURPOSE         CODE      EXPIRES  ${message('MESSAGE')}SENDER ID  PROVIDER`,
        `${slug(reset.json.slug)}Reset  password_reset  8 digits  3 min    ${message('Reset code {code}')}-          -`,
        `${slug(login.json.slug)}Login  login           6 digits  5 min    ${message(loginBody === null ? '-' : loginBody)}-          -`,
      ].join('\n'),
    );
  });
});

describe('herald campaign list', () => {
  it('lists every batch newest first with its source, up to --limit', async () => {
    const { slug, workspaceId, token } = await createTenant(stack.admin);
    expect(await campaignList(stack.admin, { workspace: slug })).toEqual({
      json: { batches: [] },
      human: `${slug} has sent nothing yet`,
    });
    const [apiTo, quickTo, campaignTo] = numbers(3) as [string, string, string];
    const api = await postMessages(stack, token, { recipients: [apiTo], message: 'By API' });
    expect(api.statusCode, api.body).toBe(202);
    const apiId = api.json().data.message.id as number;
    const quick = await sendQuickSend(
      {
        sql: stack.sql,
        temporal: stack.temporal,
        env: admin.env,
        publicUrl: PUBLIC_URL,
        secret: admin.secret,
      },
      operatorActor(),
      workspaceId,
      { recipients: quickTo, message: 'Quick one' },
    );
    expect(quick).toMatchObject({ outcome: 'sent', confirmed: true });
    const quickId = (quick as { campaignId: number }).campaignId;
    const named = await campaignCreate(admin, {
      workspace: slug,
      name: 'Spring sale',
      recipients: campaignTo,
      body: 'Sale',
    });
    expect(named.json).toEqual({ id: expect.any(Number), status: 'queued' });
    const campaignId = named.json.id as number;

    // Once each is sent, the listing stops moving: no receipt reaches PUBLIC_URL here.
    await expect
      .poll(
        async () =>
          (
            (await campaignList(stack.admin, { workspace: slug })).json.batches as {
              status: string;
              sent: number;
            }[]
          ).map((batch) => `${batch.status}/${batch.sent}`),
        { timeout: 30_000, interval: 250 },
      )
      .toEqual(['completed/1', 'completed/1', 'completed/1']);
    const listed = await campaignList(stack.admin, { workspace: slug });
    const batch = (id: number, source: string, name: string) => ({
      id,
      source,
      name,
      status: 'completed',
      purpose: 'transactional',
      recipients: 1,
      sent: 1,
      delivered: 0,
      failed: 0,
      created_at: ISO,
    });
    expect(listed.json).toEqual({
      batches: [
        batch(campaignId, 'campaign', 'Spring sale'),
        batch(quickId, 'quick_send', `Quick Send #${quickId}`),
        batch(apiId, 'api', `API send #${apiId}`),
      ],
    });
    const at = (listed.json.batches as { created_at: string }[]).map((row) => utc(row.created_at));
    const id = idColumn(campaignId, quickId, apiId);
    const name = columnOf('NAME', `Quick Send #${quickId}`);
    const tail = 'completed  1           1     0          0       ';
    expect(listed.human).toBe(
      [
        `${id('ID')}SOURCE      ${name('NAME')}STATUS     RECIPIENTS  SENT  DELIVERED  FAILED  CREATED (UTC)`,
        `${id(campaignId)}campaign    ${name('Spring sale')}${tail}${at[0]}`,
        `${id(quickId)}Quick Send  ${name(`Quick Send #${quickId}`)}${tail}${at[1]}`,
        `${id(apiId)}API send    ${name(`API send #${apiId}`)}${tail}${at[2]}`,
      ].join('\n'),
    );

    const limited = await campaignList(stack.admin, { workspace: slug, limit: '1' });
    expect(limited.json).toEqual({ batches: [batch(campaignId, 'campaign', 'Spring sale')] });
    await expect(campaignList(stack.admin, { workspace: slug, limit: '0' })).rejects.toThrow(
      new UsageError('--limit must be a whole number from 1 to 1000'),
    );
  });
});

describe('a usage error', () => {
  it('prints one line and the usage of its command only, exit code 2', async () => {
    const run = await runHerald(['key', 'list'], cliEnv());
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: 'herald: --workspace is required\nUsage:\n  herald key list --workspace <slug>\n',
    });
  });

  it('of an unknown option names it, then the usage of its command', async () => {
    const run = await runHerald(
      ['route', 'create', '--workspace', tenant.slug, '--provider', 'x'],
      cliEnv(),
    );
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "herald: Unknown option '--provider'\nUsage:\n" +
        '  herald route create --workspace <slug> --slug <slug> --providers <a,b,...> [--name <name>]\n',
    });
  });

  it('an unknown command prints one line and the commands, without their options', async () => {
    const run = await runHerald(['frobnicate'], cliEnv());
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const [line, title, roles, ...resources] = run.stderr.trimEnd().split('\n');
    expect([line, title, roles]).toEqual([
      'herald: Unknown command "frobnicate"',
      'Commands (`herald help` shows their options):',
      '  start|cluster|api|worker|simulator|migrate',
    ]);
    expect(resources).toContain('  workspace create|update|list');
    expect(resources).toContain('  campaign create|list|cancel|resume|recipients');
    expect(resources).toContain('  mcp connections list|revoke');
    expect(resources.every((resource) => !resource.includes('--'))).toBe(true);
    expect(resources.length).toBeLessThan(25);
  });

  it("a resource without a known verb prints that resource's commands", async () => {
    const run = await runHerald(['route', 'delete'], cliEnv());
    expect({ code: run.code, stderr: run.stderr }).toEqual({
      code: 2,
      stderr:
        'herald: Unknown command "route delete"\nUsage:\n' +
        '  herald route create --workspace <slug> --slug <slug> --providers <a,b,...> [--name <name>]\n' +
        '  herald route list --workspace <slug>\n',
    });
  });
});
