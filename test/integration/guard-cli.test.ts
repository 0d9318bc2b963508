/**
 * `herald guard show|set|unblock` and a key's own rate (`key create --rate`, `key rate`) against
 * the real stack: the exact objects `--json` prints, every refusal's words, the audit entries the
 * dispatcher records, and a key's rate taking effect on its next request.
 */
import { randomInt } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { guardSet, guardShow, guardUnblock } from '../../cli/admin/guard.js';
import { ADMIN_COMMANDS } from '../../cli/admin/index.js';
import { keyCreate, keyRate, keyRevoke } from '../../cli/admin/keys.js';
import type { Options } from '../../cli/admin/options.js';
import { runAsOperator } from '../../cli/context.js';
import { UsageError } from '../../cli/output.js';
import { recordRangeBlock } from '../../db/fraud-guard.js';
import { heraldEnv, runHerald, runHeraldJson } from '../support/processes.js';
import {
  createTenant,
  openStack,
  type Stack,
  signInOtpService,
  type Tenant,
} from '../support/stack.js';

let stack: Stack;

const BUILT_IN = [
  '+870',
  '+881',
  '+882',
  '+883',
  '+808',
  '+979',
  '+1900',
  '+449',
  '+4470',
  '+4484',
  '+4487',
  '+6119',
];
const EVERY_SETTING = [
  'otp_per_recipient',
  'otp_countries',
  'sms_countries',
  'block_prefix',
  'range_breaker',
  'daily_segments',
  'cap_near_percent',
  'key_rate',
  'workspace_rate',
];

/** What `guard show --json` prints for a workspace that set nothing. */
const defaultsOf = (workspace: string) => ({
  workspace,
  otp_service: null,
  otp_per_recipient: '5/15m,10/24h',
  otp_countries: 'any',
  sms_countries: 'any',
  block_prefix: 'default',
  blocked_prefixes: BUILT_IN,
  range_breaker: '20/1h@10%,1h',
  daily_segments: null,
  daily_segments_used: 0,
  cap_near_percent: 80,
  key_rate: '100/s',
  workspace_rate: '300/s',
  inherited: EVERY_SETTING,
  blocked_ranges: [],
});

/** A range no other test file blocks. */
const freshRange = () => `+61478${String(randomInt(100_000)).padStart(5, '0')}`;

const show = (tenant: Tenant, options: Options = {}) =>
  guardShow(stack.admin, { workspace: tenant.slug, ...options });
const set = (tenant: Tenant, options: Options) =>
  guardSet(stack.admin, { workspace: tenant.slug, ...options });

async function blockRange(tenant: Tenant, range: string) {
  await stack.sql.begin((tx) =>
    recordRangeBlock(tx, {
      workspaceId: tenant.workspaceId,
      range,
      coolDownSeconds: 3600,
      sends: 20,
      verified: 1,
      windowSeconds: 3600,
    }),
  );
}

/** Runs a command as `herald` does: its use-case records it, by the operator. */
async function audited(name: string, options: Options) {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new Error(`no command ${name}`);
  return runAsOperator(stack.admin, command, options);
}

/** The CLI's audit entries in the workspace, oldest first, checked to be the operator's. */
async function cliEntries(workspaceId: number) {
  const rows = await stack.sql<{ actor: string; origin: string }[]>`
    select actor, origin, action, target, details from audit_log
    where workspace_id = ${workspaceId} and source = 'cli' and actor = ${userInfo().username}
    order by id`;
  for (const row of rows) {
    expect(row.actor).toBe(userInfo().username);
    expect(row.origin).toBe(`cli@${hostname()}`);
  }
  return rows.map(({ actor: _actor, origin: _origin, ...entry }) => entry);
}

beforeAll(async () => {
  stack = await openStack();
});

afterAll(() => stack?.close());

describe('herald guard show', () => {
  it('prints the defaults, all inherited, and no blocked range', async () => {
    const tenant = await createTenant(stack.admin);
    const shown = await show(tenant);
    expect(shown.json).toEqual(defaultsOf(tenant.slug));
    expect(shown.human).toBe(
      [
        `Fraud guard of ${tenant.slug}:`,
        '  otp-per-recipient  5/15m,10/24h  (inherited)',
        '  otp-countries      any  (inherited)',
        '  sms-countries      any  (inherited)',
        '  block-prefix       default  (inherited)',
        '  range-breaker      20/1h@10%,1h  (inherited)',
        '  daily-segments     none  (inherited)',
        '  cap-near-percent   80  (inherited)',
        '  key-rate           100/s  (inherited)',
        '  workspace-rate     300/s  (inherited)',
        'Blocked ranges: none',
      ].join('\n'),
    );
  });

  it('prints exactly that object through the herald binary with --json', async () => {
    const tenant = await createTenant(stack.admin);
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
    const result = await runHeraldJson(['guard', 'show', '--workspace', tenant.slug], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toEqual(defaultsOf(tenant.slug));
    const help = await runHerald(['help'], env);
    expect(help.stdout).toContain('  guard show --workspace <slug> [--otp-service <uuid>]\n');
    expect(help.stdout).toContain('  guard unblock --workspace <slug> --range <prefix>\n');
    expect(help.stdout).toContain(
      "  key rate --id <id> --rate <n>/<s|m>|off|default   default: the workspace's key rate\n",
    );
  });

  it('refuses an unknown workspace or OTP service', async () => {
    const tenant = await createTenant(stack.admin);
    await expect(guardShow(stack.admin, { workspace: 'no-such-ws' })).rejects.toThrow(
      new UsageError('No workspace has the slug "no-such-ws"'),
    );
    await expect(show(tenant, { 'otp-service': 'login' })).rejects.toThrow(
      new UsageError(`--otp-service "login" is not an OTP service of ${tenant.slug}`),
    );
  });
});

describe('herald guard set', () => {
  it('changes the settings given, which show then prints as the workspace’s own', async () => {
    const tenant = await createTenant(stack.admin);
    const changed = await set(tenant, {
      'otp-per-recipient': '3/10m,8/24h',
      countries: 'au,NZ',
      'block-prefix': '+44 70,default',
      'range-breaker': '30/2h@5%,6h',
      'daily-segments': '1000',
      'cap-near-percent': '90',
      'key-rate': '6000/m',
      'workspace-rate': 'off',
    });
    const expected = {
      ...defaultsOf(tenant.slug),
      otp_per_recipient: '3/10m,8/24h',
      otp_countries: 'AU,NZ',
      sms_countries: 'AU,NZ',
      block_prefix: '+4470,default',
      blocked_prefixes: ['+4470', ...BUILT_IN.filter((prefix) => prefix !== '+4470')],
      range_breaker: '30/2h@5%,6h',
      daily_segments: 1000,
      cap_near_percent: 90,
      key_rate: '6000/m',
      workspace_rate: 'off',
      inherited: [],
    };
    expect(changed.json).toEqual(expected);
    expect((await show(tenant)).json).toEqual(expected);
    expect(changed.human).toContain('  daily-segments     1000 (0 used today)\n');

    // inherit clears a setting; the others keep theirs.
    const cleared = await set(tenant, { countries: 'inherit', 'block-prefix': 'none' });
    expect(cleared.json).toEqual({
      ...expected,
      otp_countries: 'any',
      sms_countries: 'any',
      block_prefix: 'none',
      blocked_prefixes: [],
      inherited: ['otp_countries', 'sms_countries'],
    });
    expect(cleared.human).toContain('  otp-countries      any  (inherited)\n');
    expect(cleared.human).toContain('  block-prefix       none\n');
  });

  it('gives an OTP service its own OTP settings over its workspace’s', async () => {
    const tenant = await createTenant(stack.admin);
    const service = await signInOtpService(stack.admin, tenant.slug);
    await set(tenant, { 'sms-countries': 'AU', 'otp-per-recipient': '4/15m' });
    const changed = await set(tenant, {
      'otp-service': service.slug.toUpperCase(),
      countries: 'NZ',
      'range-breaker': 'off',
    });
    const expected = {
      ...defaultsOf(tenant.slug),
      otp_service: service.slug,
      otp_per_recipient: '4/15m',
      otp_countries: 'NZ',
      sms_countries: 'AU',
      range_breaker: 'off',
      inherited: EVERY_SETTING.filter((name) => !['otp_countries', 'range_breaker'].includes(name)),
    };
    expect(changed.json).toEqual(expected);
    expect((await show(tenant, { 'otp-service': service.slug })).json).toEqual(expected);
    expect(changed.human.split('\n').slice(0, 2)).toEqual([
      'Updated.',
      `Fraud guard of OTP service ${service.slug} of ${tenant.slug}:`,
    ]);
    // The workspace's own settings are untouched by the service's.
    expect((await show(tenant)).json).toMatchObject({
      otp_countries: 'any',
      range_breaker: '20/1h@10%,1h',
    });
  });

  it('refuses a workspace setting for an OTP service, naming the option', async () => {
    const tenant = await createTenant(stack.admin);
    const service = await signInOtpService(stack.admin, tenant.slug);
    for (const [option, value] of [
      ['daily-segments', '100'],
      ['sms-countries', 'AU'],
      ['cap-near-percent', '50'],
      ['key-rate', '10/s'],
      ['workspace-rate', '10/s'],
    ] as const)
      await expect(
        set(tenant, { 'otp-service': service.slug, 'otp-per-recipient': '2/15m', [option]: value }),
      ).rejects.toThrow(
        new UsageError(`--${option} is a workspace setting: give it without --otp-service`),
      );
    // Nothing of the refused changes was saved.
    expect((await show(tenant, { 'otp-service': service.slug })).json).toMatchObject({
      otp_per_recipient: '5/15m,10/24h',
      inherited: EVERY_SETTING,
    });
  });

  it('refuses each malformed value with its own words', async () => {
    const tenant = await createTenant(stack.admin);
    const COUNTRIES = 'must be ISO 3166 alpha-2 country codes (AU,NZ) or any, or inherit';
    const RATE = 'must be requests per second or minute, like 100/s or 6000/m, or off, or inherit';
    for (const [option, value, rule] of [
      [
        'otp-per-recipient',
        '5/15x',
        'must be sends per window, like 5/15m,10/24h, or off, or inherit',
      ],
      [
        'otp-per-recipient',
        '0/1h',
        'must be sends per window, like 5/15m,10/24h, or off, or inherit',
      ],
      ['countries', 'AU,XX', COUNTRIES],
      ['otp-countries', 'Australia', COUNTRIES],
      ['sms-countries', 'AU;NZ', COUNTRIES],
      [
        'block-prefix',
        '+0882',
        'must be E.164 prefixes (+882,+4470), default for the built-in list, or none, or inherit',
      ],
      [
        'range-breaker',
        '20/1h@101%,1h',
        'must be sends/window@percent%,cool-down, like 20/1h@10%,1h, or off, or inherit',
      ],
      ['daily-segments', '0', 'must be a whole number of segments, or none, or inherit'],
      ['daily-segments', '1.5', 'must be a whole number of segments, or none, or inherit'],
      ['cap-near-percent', '101', 'must be a percentage from 1 to 100, or inherit'],
      ['key-rate', '100/h', RATE],
      [
        'workspace-rate',
        '0/s',
        'must be requests per second or minute, like 300/s, or off, or inherit',
      ],
    ] as const)
      await expect(set(tenant, { [option]: value })).rejects.toThrow(
        new UsageError(`--${option} "${value}" ${rule}`),
      );
    await expect(set(tenant, {})).rejects.toThrow(
      new UsageError('Give at least one setting to change, such as --otp-per-recipient'),
    );
    expect((await show(tenant)).json).toEqual(defaultsOf(tenant.slug));
  });

  it('names --countries, as given, when an OTP service’s countries are malformed', async () => {
    const tenant = await createTenant(stack.admin);
    const service = await signInOtpService(stack.admin, tenant.slug);
    await expect(set(tenant, { 'otp-service': service.slug, countries: 'XX' })).rejects.toThrow(
      new UsageError(
        '--countries "XX" must be ISO 3166 alpha-2 country codes (AU,NZ) or any, or inherit',
      ),
    );
  });
});

describe('herald guard unblock', () => {
  it('lifts a blocked range, as the operator who ran it', async () => {
    const tenant = await createTenant(stack.admin);
    const range = freshRange();
    await blockRange(tenant, range);
    const shown = (await show(tenant)).json as { blocked_ranges: unknown[] };
    expect(shown.blocked_ranges).toEqual([
      {
        range,
        blocked_at: expect.any(String),
        blocked_until: expect.any(String),
        sends: 20,
        verified: 1,
      },
    ]);
    expect((await show(tenant)).human).toMatch(
      new RegExp(
        `\\nBlocked ranges:\\n  \\${range} until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(20 sends, 1 verified\\)$`,
      ),
    );
    const lifted = await audited('guard unblock', { workspace: tenant.slug, range });
    expect(lifted.json).toEqual({ workspace: tenant.slug, range, lifted: 1 });
    expect(lifted.human).toBe(
      `Lifted the block on ${range} in ${tenant.slug}; its OTP sends count afresh from now`,
    );
    expect((await show(tenant)).json).toMatchObject({ blocked_ranges: [] });
    const [block] = await stack.sql`
      select lifted_by from guard_blocked_ranges where workspace_id = ${tenant.workspaceId}`;
    expect(block).toEqual({ liftedBy: userInfo().username });
  });

  it('refuses a range not blocked, and one that is not a range', async () => {
    const tenant = await createTenant(stack.admin);
    const range = freshRange();
    await expect(guardUnblock(stack.admin, { workspace: tenant.slug, range })).rejects.toThrow(
      new UsageError(`--range "${range}" is not blocked in ${tenant.slug}`),
    );
    // Blocked in another workspace only.
    const other = await createTenant(stack.admin);
    await blockRange(other, range);
    await expect(guardUnblock(stack.admin, { workspace: tenant.slug, range })).rejects.toThrow(
      new UsageError(`--range "${range}" is not blocked in ${tenant.slug}`),
    );
    for (const bad of ['6141999', '+0614', 'abc'])
      await expect(
        guardUnblock(stack.admin, { workspace: tenant.slug, range: bad }),
      ).rejects.toThrow(
        new UsageError(
          '--range must be a number range like +6141999 (the number without its last 4 digits)',
        ),
      );
    await expect(guardUnblock(stack.admin, { workspace: tenant.slug })).rejects.toThrow(
      new UsageError(
        '--range must be a number range like +6141999 (the number without its last 4 digits)',
      ),
    );
  });
});

describe('the audit log', () => {
  it('records guard set and unblock with what was asked, and not show', async () => {
    const tenant = await createTenant(stack.admin);
    const service = await signInOtpService(stack.admin, tenant.slug);
    const range = freshRange();
    await blockRange(tenant, range);
    await audited('guard show', { workspace: tenant.slug, json: true });
    await audited('guard set', {
      workspace: tenant.slug,
      'otp-per-recipient': '3/15m',
      'key-rate': '50/s',
      json: true,
    });
    await audited('guard set', {
      workspace: tenant.slug,
      'otp-service': service.slug,
      'range-breaker': '10/1h@20%,2h',
    });
    await audited('guard unblock', { workspace: tenant.slug, range });
    // A refused change records nothing.
    await expect(
      audited('guard set', { workspace: tenant.slug, 'key-rate': 'lots' }),
    ).rejects.toThrow(UsageError);
    expect(await cliEntries(tenant.workspaceId)).toEqual([
      {
        action: 'guard.updated',
        target: `workspace ${tenant.slug}`,
        details: { otp_per_recipient: '3/15m', key_rate: '50/s' },
      },
      {
        action: 'guard.updated',
        target: `OTP service ${service.slug}`,
        details: { range_breaker: '10/1h@20%,2h' },
      },
      { action: 'guard.range_unblocked', target: `range ${range}`, details: { range } },
    ]);
  });
});

describe('a key’s own rate', () => {
  const lookup = (token: string) =>
    stack.app.inject({
      method: 'GET',
      url: '/api/v1/messages/1',
      headers: { authorization: `Bearer ${token}` },
    });
  const storedRate = async (id: number) =>
    (
      (await stack.sql`select rate_limit from api_keys where id = ${id}`) as [
        { rateLimit: unknown },
      ]
    )[0].rateLimit;
  const keyOf = async (tenant: Tenant, options: Options = {}) =>
    (
      await keyCreate(stack.admin, {
        workspace: tenant.slug,
        abilities: 'messages:read',
        ...options,
      })
    ).json as { id: number; token: string; prefix: string; rate: string };

  it('is set at creation, stored, and holds the key to it: one request over answers 429', async () => {
    const tenant = await createTenant(stack.admin);
    const key = await keyOf(tenant, { rate: '2/m' });
    expect(key.rate).toBe('2/m');
    expect(await storedRate(key.id)).toEqual({ requests: 2, perSeconds: 60 });
    expect((await lookup(key.token)).statusCode).toBe(404);
    const second = await lookup(key.token);
    expect(second.statusCode).toBe(404);
    expect(second.headers['ratelimit-policy']).toBe('"key";q=2;w=60, "workspace";q=300;w=1');
    const over = await lookup(key.token);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({
      message: expect.stringMatching(
        /^The rate limit of this API key is reached\. Retry after \d+ seconds\.$/,
      ),
    });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    // The workspace's other keys follow the workspace's key rate.
    expect((await lookup(tenant.token)).statusCode).toBe(404);
  });

  it('is changed by key rate on the next request, and default follows the workspace again', async () => {
    const tenant = await createTenant(stack.admin);
    const key = await keyOf(tenant);
    expect(key.rate).toBe('default');
    expect(await storedRate(key.id)).toBeNull();

    const limited = await keyRate(stack.admin, { id: String(key.id), rate: '1/m' });
    expect(limited).toEqual({
      json: { id: key.id, rate: '1/m' },
      human: `API key ${key.id} is now limited to 1/m`,
    });
    expect(await storedRate(key.id)).toEqual({ requests: 1, perSeconds: 60 });
    expect((await lookup(key.token)).statusCode).toBe(404);
    expect((await lookup(key.token)).statusCode).toBe(429);

    const off = await keyRate(stack.admin, { id: String(key.id), rate: 'off' });
    expect(off.json).toEqual({ id: key.id, rate: 'off' });
    expect(await storedRate(key.id)).toBe('off');
    const unlimited = await lookup(key.token);
    expect(unlimited.statusCode).toBe(404);
    expect(unlimited.headers['ratelimit-policy']).toBe('"workspace";q=300;w=1');

    const followed = await keyRate(stack.admin, { id: String(key.id), rate: 'default' });
    expect(followed.json).toEqual({ id: key.id, rate: 'default' });
    expect(await storedRate(key.id)).toBeNull();
    expect(followed.human).toBe(
      `API key ${key.id} now follows its workspace's key rate (herald guard show)`,
    );
    await set(tenant, { 'key-rate': '7/m' });
    // The key's bucket keeps the tokens it has (a change of rate grants none), so whether this
    // request is let through depends on the clock; the rate it is held to does not.
    const workspaceRate = await lookup(key.token);
    expect(workspaceRate.headers['ratelimit-policy']).toBe('"key";q=7;w=60, "workspace";q=300;w=1');
  });

  it('refuses a malformed rate, an unknown or revoked key', async () => {
    const tenant = await createTenant(stack.admin);
    const key = await keyOf(tenant);
    const RULE = 'must be requests per second or minute, like 100/s or 6000/m, off, or default';
    for (const rate of ['100/h', '0/s', 'fast'])
      await expect(keyRate(stack.admin, { id: String(key.id), rate })).rejects.toThrow(
        new UsageError(`--rate "${rate}" ${RULE}`),
      );
    await expect(keyOf(tenant, { rate: '5/15m' })).rejects.toThrow(
      new UsageError(`--rate "5/15m" ${RULE}`),
    );
    await expect(keyRate(stack.admin, { id: String(key.id) })).rejects.toThrow(
      new UsageError('--rate is required'),
    );
    await expect(keyRate(stack.admin, { id: '999999999', rate: '1/s' })).rejects.toThrow(
      new UsageError('No API key has the id 999999999'),
    );
    await keyRevoke(stack.admin, { id: String(key.id) });
    await expect(keyRate(stack.admin, { id: String(key.id), rate: '1/s' })).rejects.toThrow(
      new UsageError(`API key ${key.id} is revoked`),
    );
    expect(await storedRate(key.id)).toBeNull();
  });

  it('is audited at creation and on each change', async () => {
    const tenant = await createTenant(stack.admin);
    const created = await audited('key create', {
      workspace: tenant.slug,
      abilities: 'messages:read',
      rate: '20/s',
    });
    const { id, prefix } = created.json as { id: number; prefix: string };
    await audited('key rate', { id: String(id), rate: 'default' });
    expect(await cliEntries(tenant.workspaceId)).toEqual([
      {
        action: 'api_key.created',
        target: `API key ${prefix}`,
        details: {
          abilities: 'messages:read',
          name: null,
          provider: null,
          failover_route: null,
          rate: '20/s',
        },
      },
      { action: 'api_key.rate_changed', target: `API key ${prefix}`, details: { rate: 'default' } },
    ]);
  });
});
