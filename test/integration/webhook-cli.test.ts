/**
 * `herald webhook …`: creation and its refusals (unknown events, non-http(s) URLs, SSRF), list,
 * disable, enable, delete and the attempts log, through the command functions and once through
 * the real `herald` binary with --json.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Options } from '../../cli/admin/options.js';
import {
  webhookAttempts,
  webhookCreate,
  webhookDelete,
  webhookDisable,
  webhookEnable,
  webhookList,
} from '../../cli/admin/webhooks.js';
import { UsageError } from '../../cli/output.js';
import type { HostResolver } from '../../security/ssrf.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;

const ALLOW_HINT =
  'webhooks go only to public addresses (WEBHOOK_ALLOW_PRIVATE_URLS=true allows private ones)';
const refusal = (reason: string) => new UsageError(`--url refused: ${reason}; ${ALLOW_HINT}`);
const create = (options: Options, dns?: HostResolver) =>
  webhookCreate(dns ? { ...stack.admin, webhookResolver: dns } : stack.admin, {
    workspace: tenant.slug,
    events: 'message.delivered',
    ...options,
  });

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
});

afterAll(() => stack?.close());

describe('webhook create refuses', () => {
  it.each([
    ['http://127.0.0.1:8080/hook', '127.0.0.1 is a loopback address'],
    ['http://127.1.2.3/hook', '127.1.2.3 is a loopback address'],
    ['http://10.0.0.1/hook', '10.0.0.1 is a private address'],
    ['https://172.16.5.4/hook', '172.16.5.4 is a private address'],
    ['https://192.168.1.20/hook', '192.168.1.20 is a private address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['http://100.64.0.7/hook', '100.64.0.7 is a carrier-grade NAT address'],
    ['http://0.0.0.0:3000/hook', '0.0.0.0 is an unspecified address'],
    ['http://224.0.0.251/hook', '224.0.0.251 is a multicast address'],
    ['http://2130706433/hook', '127.0.0.1 is a loopback address'],
    ['http://0x7f.1/hook', '127.0.0.1 is a loopback address'],
    ['http://[::1]:9000/hook', '::1 is a loopback address'],
    ['http://[::]/hook', ':: is an unspecified address'],
    ['http://[fd12:3456::1]/hook', 'fd12:3456::1 is a unique local address'],
    ['http://[fe80::1]/hook', 'fe80::1 is a link-local address'],
    ['http://[ff02::1]/hook', 'ff02::1 is a multicast address'],
    ['http://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1 is an IPv4-mapped loopback address'],
    ['http://[::ffff:10.1.2.3]/hook', '::ffff:a01:203 is an IPv4-mapped private address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is an IPv4-mapped link-local address'],
  ])('%s', async (url, reason) => {
    await expect(create({ url })).rejects.toThrow(refusal(reason));
  });

  it('a host name that resolves to loopback (localhost), without naming the address', async () => {
    await expect(create({ url: 'http://localhost:3000/hook' })).rejects.toThrow(
      refusal('localhost does not resolve to an allowed address'),
    );
  });

  it('a host name with any non-public address among its public ones', async () => {
    const dns: HostResolver = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.20.30.40', family: 4 },
    ];
    await expect(create({ url: 'https://hooks.example.com/in' }, dns)).rejects.toThrow(
      refusal('hooks.example.com does not resolve to an allowed address'),
    );
  });

  it('a host name that does not resolve, in the same words (no oracle of internal names)', async () => {
    await expect(create({ url: 'https://no-such-host.invalid/hook' })).rejects.toThrow(
      refusal('no-such-host.invalid does not resolve to an allowed address'),
    );
  });

  it('URLs that are not http(s), or carry credentials', async () => {
    await expect(create({ url: 'ftp://hooks.example.com/in' })).rejects.toThrow(
      new UsageError('--url "ftp://hooks.example.com/in" is not an http(s) URL'),
    );
    await expect(create({ url: 'hooks.example.com/in' })).rejects.toThrow(
      new UsageError('--url "hooks.example.com/in" is not an http(s) URL'),
    );
    await expect(create({ url: 'https://user:pw@93.184.215.14/in' })).rejects.toThrow(
      new UsageError('--url must not contain a user name or password'),
    );
  });

  it('unknown events, and a missing list', async () => {
    await expect(
      create({ url: 'https://93.184.215.14/in', events: 'message.sent,message.read' }),
    ).rejects.toThrow(
      new UsageError(
        'Unknown webhook event "message.read"; events are message.sent, message.delivered, ' +
          'message.failed, message.received, campaign.completed, campaign.canceled, otp.accepted, ' +
          'otp.verified, otp.expired, ' +
          'otp.range_blocked, spend.cap_near, or all',
      ),
    );
    await expect(create({ url: 'https://93.184.215.14/in', events: ' , ' })).rejects.toThrow(
      new UsageError('--events must list at least one event'),
    );
  });

  it('nothing when the operator allows private addresses', async () => {
    const context = {
      ...stack.admin,
      env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true },
    };
    const created = await webhookCreate(context, {
      workspace: tenant.slug,
      url: 'http://10.0.0.1/hook',
      events: 'otp.verified',
    });
    expect(created.json).toMatchObject({ url: 'http://10.0.0.1/hook', events: ['otp.verified'] });
    await webhookDelete(stack.admin, { id: String(created.json.id) });
  });
});

describe('webhook list, disable, enable, delete, attempts', () => {
  it('manages an endpoint through its life', async () => {
    const own = await createTenant(stack.admin);
    const created = await webhookCreate(stack.admin, {
      workspace: own.slug,
      url: 'https://93.184.215.14/hooks/herald',
      events: 'otp.verified,message.sent,message.sent',
      description: 'Order service',
    });
    const id = created.json.id as number;
    expect(created.json).toEqual({
      id: expect.any(Number),
      url: 'https://93.184.215.14/hooks/herald',
      events: ['message.sent', 'otp.verified'],
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = {
      id,
      url: 'https://93.184.215.14/hooks/herald',
      description: 'Order service',
      events: ['message.sent', 'otp.verified'],
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
      created_at: expect.stringMatching(/Z$/),
    };
    expect((await webhookList(stack.admin, { workspace: own.slug })).json).toEqual({
      endpoints: [listed],
    });

    const disabled = await webhookDisable(stack.admin, { id: String(id) });
    expect(disabled.json).toEqual({
      ...listed,
      enabled: false,
      disabled_at: expect.stringMatching(/Z$/),
      disabled_reason: 'Disabled by an operator',
    });
    const [subscribers] = await stack.sql<{ ids: number[] | null }[]>`
      select webhook_subscribers(${own.workspaceId}, 'message.sent') as ids`;
    expect(subscribers?.ids).toBeNull();

    expect((await webhookEnable(stack.admin, { id: String(id) })).json).toEqual(listed);
    expect((await webhookAttempts(stack.admin, { id: String(id) })).json).toEqual({
      endpoint: listed,
      attempts: [],
    });
    await expect(webhookAttempts(stack.admin, { id: String(id), limit: '0' })).rejects.toThrow(
      new UsageError('--limit must be a whole number from 1 to 1000'),
    );

    expect((await webhookDelete(stack.admin, { id: String(id) })).json).toEqual({ deleted: true });
    expect((await webhookList(stack.admin, { workspace: own.slug })).json).toEqual({
      endpoints: [],
    });
    for (const command of [webhookDelete, webhookEnable, webhookDisable, webhookAttempts]) {
      await expect(command(stack.admin, { id: String(id) })).rejects.toThrow(
        new UsageError(`No webhook endpoint has the id ${id}`),
      );
    }
    await expect(webhookDelete(stack.admin, { id: 'abc' })).rejects.toThrow(
      new UsageError('--id "abc" is not a webhook endpoint id'),
    );
  });
});

describe('herald webhook (the binary)', () => {
  it('prints one JSON object with the secret on create, and the exact refusal', async () => {
    const env = heraldEnv({
      DATABASE_URL: inject('databaseUrl'),
      HERALD_SECRET: inject('secret'),
    });
    const created = await runHeraldJson(
      [
        'webhook',
        'create',
        '--workspace',
        tenant.slug,
        '--url',
        'https://93.184.215.14/cli',
        '--events',
        'all',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toEqual({
      id: expect.any(Number),
      url: 'https://93.184.215.14/cli',
      events: [
        'message.sent',
        'message.delivered',
        'message.failed',
        'message.received',
        'campaign.completed',
        'campaign.canceled',
        'otp.accepted',
        'otp.verified',
        'otp.expired',
        'otp.range_blocked',
        'spend.cap_near',
      ],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });

    const refused = await runHeraldJson(
      [
        'webhook',
        'create',
        '--workspace',
        tenant.slug,
        '--url',
        'http://localhost/x',
        '--events',
        'all',
      ],
      env,
    );
    expect(refused.code).toBe(2);
    expect(refused.json).toEqual({
      error: {
        type: 'UsageError',
        message: refusal('localhost does not resolve to an allowed address').message,
      },
    });
  });
});
