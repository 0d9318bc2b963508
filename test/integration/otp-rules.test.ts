/**
 * POST /api/v1/otp/send and /api/v1/otp/verify against the real stack: every validation rule of
 * docs/spec.md §4.3, §4.4 and §8 answers 422 with its exact body and saves and sends nothing; then the
 * settings a send may take (code length, message, sender, provider) and how it is paid for
 * (credits, a connected provider, a refund when the provider rejects, 402 without credits).
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keyCreate } from '../../cli/admin/keys.js';
import { userCreate } from '../../cli/admin/users.js';
import { addCredits, creditBalance } from '../../db/credits.js';
import { insertMessageTemplate, upsertSenderId } from '../../db/otp-settings.js';
import { insertProvider, setProviderActive } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { inbox, invalid, setBehaviour } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SOME_UUID = '3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f';
/** Numbers under this prefix are rejected by the shared simulator while the refund test runs. */
const REJECTED_PREFIX = '+614399';

let stack: Stack;
const simulators: RunningSimulator[] = [];

const issued = new Set<string>();
/** Fresh Australian mobiles under `prefix` (+6146 by default, which no other test file uses). */
function mobile(prefix = '+6146'): string {
  const digits = 12 - prefix.length;
  for (;;) {
    const number = `${prefix}${String(randomInt(10 ** digits)).padStart(digits, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    return number;
  }
}

function post(token: string, url: string, payload: unknown) {
  return stack.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
}

async function provider(tenant: Tenant, slug: string, baseUrl: string) {
  await insertProvider(stack.sql, {
    workspaceId: tenant.workspaceId,
    slug,
    name: slug,
    type: 'simulator',
    requiresSenderId: false,
    settings: { base_url: baseUrl },
  });
}

async function template(
  tenant: Tenant,
  slug: string,
  body: string,
  options: { purpose?: 'transactional' | 'marketing'; enabled?: boolean } = {},
) {
  await insertMessageTemplate(stack.sql, {
    workspaceId: tenant.workspaceId,
    slug,
    name: slug,
    body,
    purpose: options.purpose ?? 'transactional',
    enabled: options.enabled ?? true,
  });
}

async function sender(tenant: Tenant, providerSlug: string, name: string, approved = true) {
  await upsertSenderId(stack.sql, {
    workspaceId: tenant.workspaceId,
    providerSlug,
    sender: name,
    approved,
  });
}

/** A key of a second member of the workspace whose permissions lack messages.read. */
async function keyOfMemberWithoutMessagesRead(tenant: Tenant): Promise<string> {
  const email = `narrow@${tenant.slug}.test`;
  const { id: userId } = (
    await userCreate(stack.admin, { workspace: tenant.slug, email, password: 'correct horse 2' })
  ).json as { id: number };
  await stack.sql`
    update workspace_members set permissions = array_remove(permissions, 'messages.read')
    where workspace_id = ${tenant.workspaceId} and user_id = ${userId}`;
  const { token } = (
    await keyCreate(stack.admin, {
      workspace: tenant.slug,
      user: email,
      abilities: 'otp:send,otp:verify',
    })
  ).json as { token: string };
  return token;
}

beforeAll(async () => {
  stack = await openStack();
});

afterAll(async () => {
  for (const simulator of simulators) await simulator.close();
  await stack?.close();
});

describe('validation (docs/spec.md §4.3, §4.4, §8)', () => {
  let tenant: Tenant;
  let narrowToken: string;
  const recipient = mobile();
  const valid = { recipient, purpose: 'login' };

  beforeAll(async () => {
    tenant = await createTenant(stack.admin);
    await addCredits(stack.sql, tenant.workspaceId, 100);
    await provider(tenant, 'sim', simulatorUrl);
    await provider(tenant, 'retired', simulatorUrl);
    await setProviderActive(stack.sql, tenant.workspaceId, 'retired', false);
    await template(tenant, 'otp', 'Code {code}');
    await template(tenant, 'off', 'Code {code}', { enabled: false });
    await template(tenant, 'promo', 'Sale! {code}', { purpose: 'marketing' });
    await sender(tenant, 'own', 'Pending', false);
    await sender(tenant, 'sim', 'SimOnly');
    narrowToken = await keyOfMemberWithoutMessagesRead(tenant);
  });

  const prohibitedWithService = (field: string) =>
    invalid(
      field,
      `The ${field.replaceAll('_', ' ')} field is prohibited when service slug is present.`,
    );
  const sendCases: [string, unknown, object][] = [
    [
      'recipient missing',
      { purpose: 'login' },
      invalid('recipient', 'The recipient field is required.'),
    ],
    [
      'recipient not in E.164',
      { ...valid, recipient: '0412 345 678' },
      invalid('recipient', 'The recipient field must be a valid E.164 phone number.'),
    ],
    [
      'recipient E.164-shaped but not a number',
      { ...valid, recipient: '+99912345678' },
      invalid('recipient', 'The recipient field must be a valid E.164 phone number.'),
    ],
    [
      'recipient not Australian, for the own provider',
      { ...valid, recipient: '+14155550123' },
      invalid(
        'recipient',
        'The recipient field must be an Australian mobile number for the selected provider.',
      ),
    ],
    [
      'recipient an Australian landline, for the own provider',
      { ...valid, recipient: '+61212345678' },
      invalid(
        'recipient',
        'The recipient field must be an Australian mobile number for the selected provider.',
      ),
    ],
    [
      'purpose missing without service_slug',
      { recipient },
      invalid('purpose', 'The purpose field is required when service slug is not present.'),
    ],
    [
      'purpose over 100 characters',
      { ...valid, purpose: 'p'.repeat(101) },
      invalid('purpose', 'The purpose field must not be greater than 100 characters.'),
    ],
    [
      'purpose with a character outside letters, digits, . _ : -',
      { ...valid, purpose: 'log in' },
      invalid('purpose', 'The purpose field format is invalid.'),
    ],
    ['code given', { ...valid, code: '123456' }, invalid('code', 'The code field is prohibited.')],
    [
      'failover_route_slug given',
      { ...valid, failover_route_slug: 'main' },
      invalid('failover_route_slug', 'The failover route slug field is prohibited.'),
    ],
    ...(
      [
        ['purpose', 'login'],
        ['code_length', 6],
        ['expires_in_minutes', 5],
        ['template_slug', 'otp'],
        ['message_template', 'Code {code}'],
        ['provider_slug', 'sim'],
        ['sender_id', 'SimOnly'],
        ['routing_type', 'direct'],
        ['failover_route_slug', 'main'],
      ] as const
    ).map(([field, value]): [string, unknown, object] => [
      `service_slug with ${field}`,
      { recipient, service_slug: SOME_UUID, [field]: value },
      prohibitedWithService(field),
    ]),
    [
      'service_slug not a UUID',
      { recipient, service_slug: 'login' },
      invalid('service_slug', 'The service slug field must be a valid UUID.'),
    ],
    [
      'service_slug of no saved service',
      { recipient, service_slug: SOME_UUID },
      invalid('service_slug', 'The selected service slug is invalid.'),
    ],
    [
      'template_slug with message_template',
      { ...valid, template_slug: 'otp', message_template: 'Code {code}' },
      invalid(
        'message_template',
        'The message template field is prohibited when template slug is present.',
      ),
    ],
    [
      'an unknown template',
      { ...valid, template_slug: 'ghost' },
      invalid('template_slug', 'The selected template slug is invalid.'),
    ],
    [
      'a disabled template',
      { ...valid, template_slug: 'off' },
      invalid('template_slug', 'The selected template slug is invalid.'),
    ],
    [
      'a marketing template',
      { ...valid, template_slug: 'promo' },
      invalid('template_slug', 'The selected template slug is invalid.'),
    ],
    [
      'message_template without {code}',
      { ...valid, message_template: 'Your code' },
      invalid('message_template', 'The message template field must contain {code} exactly once.'),
    ],
    [
      'message_template with {code} twice',
      { ...valid, message_template: '{code} again {code}' },
      invalid('message_template', 'The message template field must contain {code} exactly once.'),
    ],
    [
      'message_template with another placeholder',
      { ...valid, message_template: 'Hi {name}, your code is {code}' },
      invalid(
        'message_template',
        'The message template field may not contain placeholders other than {code}.',
      ),
    ],
    [
      'message_template over 160 GSM-7 characters once rendered',
      { ...valid, message_template: `${'x'.repeat(155)}{code}` },
      invalid(
        'message_template',
        'The message template field must fit in one SMS segment with the code.',
      ),
    ],
    [
      'message_template of 78 characters with one non-GSM character (UCS-2: 70)',
      { ...valid, message_template: `Kod ł ${'x'.repeat(65)} {code}` },
      invalid(
        'message_template',
        'The message template field must fit in one SMS segment with the code.',
      ),
    ],
    [
      'message_template fitting with 6 digits but not with code_length 8',
      { ...valid, message_template: `${'x'.repeat(154)}{code}`, code_length: 8 },
      invalid(
        'message_template',
        'The message template field must fit in one SMS segment with the code.',
      ),
    ],
    [
      'code_length 5',
      { ...valid, code_length: 5 },
      invalid('code_length', 'The code length field must be between 6 and 8.'),
    ],
    [
      'code_length 9',
      { ...valid, code_length: 9 },
      invalid('code_length', 'The code length field must be between 6 and 8.'),
    ],
    [
      'code_length 6.5',
      { ...valid, code_length: 6.5 },
      invalid('code_length', 'The code length field must be an integer.'),
    ],
    [
      'code_length "6"',
      { ...valid, code_length: '6' },
      invalid('code_length', 'The code length field must be an integer.'),
    ],
    [
      'expires_in_minutes 0',
      { ...valid, expires_in_minutes: 0 },
      invalid('expires_in_minutes', 'The expires in minutes field must be between 1 and 10.'),
    ],
    [
      'expires_in_minutes 11',
      { ...valid, expires_in_minutes: 11 },
      invalid('expires_in_minutes', 'The expires in minutes field must be between 1 and 10.'),
    ],
    [
      'sender_id over 50 characters',
      { ...valid, sender_id: 's'.repeat(51) },
      invalid('sender_id', 'The sender id field must not be greater than 50 characters.'),
    ],
    [
      'sender_id not registered',
      { ...valid, sender_id: 'Stranger' },
      invalid('sender_id', 'The selected sender id is invalid.'),
    ],
    [
      'sender_id pending approval',
      { ...valid, sender_id: 'Pending' },
      invalid('sender_id', 'The selected sender id is invalid.'),
    ],
    [
      'sender_id approved for another provider',
      { ...valid, sender_id: 'SimOnly' },
      invalid('sender_id', 'The selected sender id is invalid.'),
    ],
    [
      'routing_type failover',
      { ...valid, routing_type: 'failover' },
      invalid(
        'routing_type',
        'The selected routing type is invalid. OTP supports direct routing only.',
      ),
    ],
    [
      'an unknown provider_slug',
      { ...valid, provider_slug: 'ghost' },
      invalid('provider_slug', 'The selected provider slug is invalid.'),
    ],
    [
      'a disabled provider_slug',
      { ...valid, provider_slug: 'retired' },
      invalid('provider_slug', 'The selected provider slug is invalid.'),
    ],
  ];

  it.each(sendCases)('send refuses %s', async (_case, body, expected) => {
    const response = await post(tenant.token, '/api/v1/otp/send', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(expected);
  });

  it('send refuses a template when the key user lacks messages.read', async () => {
    const response = await post(narrowToken, '/api/v1/otp/send', {
      ...valid,
      template_slug: 'otp',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(
      invalid('template_slug', 'The selected template slug is invalid.'),
    );
  });

  it('send refuses a template when the key has no user', async () => {
    const { token } = (
      await keyCreate(stack.admin, { workspace: tenant.slug, abilities: 'otp:send' })
    ).json as { token: string };
    const response = await post(token, '/api/v1/otp/send', { ...valid, template_slug: 'otp' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(
      invalid('template_slug', 'The selected template slug is invalid.'),
    );
  });

  it('answers every failing field at once, the first as the message', async () => {
    const response = await post(tenant.token, '/api/v1/otp/send', {
      code: '1',
      code_length: 9,
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'The recipient field is required. (and 3 more errors)',
      errors: {
        recipient: ['The recipient field is required.'],
        code: ['The code field is prohibited.'],
        purpose: ['The purpose field is required when service slug is not present.'],
        code_length: ['The code length field must be between 6 and 8.'],
      },
    });
  });

  it('refuses a 500,000-character message_template at once, without stalling the process', async () => {
    const started = performance.now();
    let healthAnsweredAt = Number.POSITIVE_INFINITY;
    const [response, health] = await Promise.all([
      post(tenant.token, '/api/v1/otp/send', {
        ...valid,
        message_template: `${'x'.repeat(499_994)}{code}`,
      }),
      stack.app.inject({ method: 'GET', url: '/health' }).then((answer) => {
        healthAnsweredAt = performance.now();
        return answer;
      }),
    ]);
    const answeredIn = performance.now() - started;
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(
      invalid(
        'message_template',
        'The message template field must fit in one SMS segment with the code.',
      ),
    );
    expect(health.statusCode).toBe(200);
    // Before the length bound this request held the event loop for over 20 minutes.
    expect(answeredIn).toBeLessThan(2_000);
    expect(healthAnsweredAt - started).toBeLessThan(2_000);
  });

  const verifyValid = { recipient, code: '123456', request_id: SOME_UUID };
  const verifyCases: [string, unknown, object][] = [
    [
      'recipient missing',
      { code: '123456', request_id: SOME_UUID },
      invalid('recipient', 'The recipient field is required.'),
    ],
    [
      'recipient not in E.164',
      { ...verifyValid, recipient: '0412345678' },
      invalid('recipient', 'The recipient field must be a valid E.164 phone number.'),
    ],
    [
      'code missing',
      { recipient, request_id: SOME_UUID },
      invalid('code', 'The code field is required.'),
    ],
    [
      'code a number',
      { ...verifyValid, code: 123456 },
      invalid('code', 'The code field must be a string.'),
    ],
    [
      'code of 3 digits',
      { ...verifyValid, code: '123' },
      invalid('code', 'The code field must be 4 to 8 digits.'),
    ],
    [
      'code of 9 digits',
      { ...verifyValid, code: '123456789' },
      invalid('code', 'The code field must be 4 to 8 digits.'),
    ],
    [
      'code of letters',
      { ...verifyValid, code: 'abcdef' },
      invalid('code', 'The code field must be 4 to 8 digits.'),
    ],
    [
      'both request_id and purpose',
      { ...verifyValid, purpose: 'login' },
      invalid('request_id', 'The request id field is prohibited when purpose is present.'),
    ],
    [
      'neither request_id nor purpose',
      { recipient, code: '123456' },
      invalid('request_id', 'The request id field is required when purpose is not present.'),
    ],
    [
      'request_id not a UUID',
      { ...verifyValid, request_id: 'abc' },
      invalid('request_id', 'The request id field must be a valid UUID.'),
    ],
    [
      'purpose with a space',
      { recipient, code: '123456', purpose: 'log in' },
      invalid('purpose', 'The purpose field format is invalid.'),
    ],
  ];

  it.each(verifyCases)('verify refuses %s', async (_case, body, expected) => {
    const response = await post(tenant.token, '/api/v1/otp/verify', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(expected);
  });

  it('saved, charged and sent nothing for any refused request', async () => {
    const rows = await stack.sql`
      select id from otp_requests where workspace_id = ${tenant.workspaceId}`;
    expect(rows).toEqual([]);
    expect(await creditBalance(stack.sql, tenant.workspaceId)).toEqual({
      balance: 100,
      ledgerSum: 100,
    });
    expect(await inbox(simulatorUrl, recipient)).toEqual([]);
    const failures = await stack.sql`
      select id from otp_verification_failures where workspace_id = ${tenant.workspaceId}`;
    expect(failures).toEqual([]);
  });
});

describe('what a send uses and how it is paid for', () => {
  let tenant: Tenant;

  beforeAll(async () => {
    tenant = await createTenant(stack.admin);
    await addCredits(stack.sql, tenant.workspaceId, 50);
  });

  const send = (payload: object, token = tenant.token) => post(token, '/api/v1/otp/send', payload);
  const verify = (payload: object, token = tenant.token) =>
    post(token, '/api/v1/otp/verify', payload);
  const balance = async () => (await creditBalance(stack.sql, tenant.workspaceId)).balance;

  it('sends an 8-digit code when code_length is 8', async () => {
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login', code_length: 8 });
    expect(response.statusCode).toBe(202);
    const [message] = await inbox(simulatorUrl, recipient);
    expect(message?.body).toMatch(/^Your verification code is \d{8}\.$/);
    const code = /\d{8}/.exec(message?.body ?? '')?.[0] as string;
    const verified = await verify({
      recipient,
      code,
      request_id: response.json().data.request_id,
    });
    expect(verified.statusCode).toBe(200);
  });

  it('sends the message_template as the text, with the code in place of {code}', async () => {
    const recipient = mobile();
    const response = await send({
      recipient,
      purpose: 'login',
      message_template: 'Herald: {code} is your sign-in code. Do not share it.',
    });
    expect(response.statusCode).toBe(202);
    const [message] = await inbox(simulatorUrl, recipient);
    expect(message?.body).toMatch(/^Herald: \d{6} is your sign-in code\. Do not share it\.$/);
  });

  it('accepts a message_template of exactly 160 GSM-7 characters once rendered', async () => {
    const recipient = mobile();
    const response = await send({
      recipient,
      purpose: 'login',
      message_template: `${'x'.repeat(154)}{code}`,
    });
    expect(response.statusCode).toBe(202);
    expect(response.json().data.billing).toEqual({
      source: 'credits',
      settlement_status: 'settled',
      credits_charged: 1,
    });
    const [message] = await inbox(simulatorUrl, recipient);
    expect(message?.body).toHaveLength(160);
  });

  it("sends an enabled transactional template's text", async () => {
    await template(tenant, 'signin', 'Sign-in code: {code}');
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login', template_slug: 'signin' });
    expect(response.statusCode).toBe(202);
    const [message] = await inbox(simulatorUrl, recipient);
    expect(message?.body).toMatch(/^Sign-in code: \d{6}$/);
  });

  it('sends from an approved sender and reports it', async () => {
    await sender(tenant, 'own', 'HeraldApp');
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login', sender_id: 'HeraldApp' });
    expect(response.statusCode).toBe(202);
    expect(response.json().data).toMatchObject({ status: 'accepted', sender_id: 'HeraldApp' });
    const [message] = await inbox(simulatorUrl, recipient);
    expect(message?.from).toBe('HeraldApp');
  });

  it("uses the key's direct provider, billed to it (connected_provider) and not to credits", async () => {
    const direct = await startSimulator({ port: 0 });
    simulators.push(direct);
    await provider(tenant, 'direct-sim', direct.url);
    const { token } = (
      await keyCreate(stack.admin, {
        workspace: tenant.slug,
        user: `dev@${tenant.slug}.test`,
        abilities: 'otp:send,otp:verify',
        provider: 'direct-sim',
      })
    ).json as { token: string };
    const before = await balance();
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login' }, token);
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({
      message: 'Verification code sent.',
      data: {
        request_id: expect.stringMatching(UUID),
        status: 'accepted',
        expires_at: expect.stringMatching(ISO),
        provider: 'direct-sim',
        sender_id: null,
        billing: {
          source: 'connected_provider',
          settlement_status: 'external',
          credits_charged: 0,
        },
      },
    });
    expect(await balance()).toBe(before);
    expect(await inbox(simulatorUrl, recipient)).toEqual([]);
    const [message] = await inbox(direct.url, recipient);
    const code = /\d{6}/.exec(message?.body ?? '')?.[0] as string;
    const verified = await verify({ recipient, code, request_id: response.json().data.request_id });
    expect(verified.json()).toEqual({ message: 'The code is verified.' });

    // Explicit direct routing without a provider replaces the key's routing: the own provider.
    const explicit = await send({ recipient, purpose: 'login', routing_type: 'direct' }, token);
    expect(explicit.json().data).toMatchObject({ status: 'accepted', provider: 'own' });
    expect(await inbox(simulatorUrl, recipient)).toHaveLength(1);
  });

  it('lets a workspace provider take a number the own provider would refuse', async () => {
    const elsewhere = await startSimulator({ port: 0 });
    simulators.push(elsewhere);
    await provider(tenant, 'worldwide', elsewhere.url);
    const recipient = '+14155550123';
    const response = await send({ recipient, purpose: 'login', provider_slug: 'worldwide' });
    expect(response.statusCode).toBe(202);
    expect(response.json().data).toMatchObject({ status: 'accepted', provider: 'worldwide' });
    expect(await inbox(elsewhere.url, recipient)).toHaveLength(1);
  });

  it('answers 402 and sends nothing when the workspace lacks credits', async () => {
    const broke = await createTenant(stack.admin);
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login' }, broke.token);
    expect(response.statusCode).toBe(402);
    expect(response.json()).toEqual({
      message:
        'The workspace does not have enough credits: this code needs 1. An operator adds ' +
        `credits with \`herald credits add --workspace ${broke.slug} --amount <n>\`.`,
    });
    expect(await inbox(simulatorUrl, recipient)).toEqual([]);
    const rows =
      await stack.sql`select id from otp_requests where workspace_id = ${broke.workspaceId}`;
    expect(rows).toEqual([]);
    expect(await creditBalance(stack.sql, broke.workspaceId)).toEqual({ balance: 0, ledgerSum: 0 });
  });

  it('answers failed when a connected provider rejects, charging no credits', async () => {
    const rejecting = await startSimulator({ port: 0 });
    simulators.push(rejecting);
    await setBehaviour(rejecting.url, { outcome: 'reject' });
    await provider(tenant, 'rejecting', rejecting.url);
    const before = await balance();
    const recipient = mobile();
    const response = await send({ recipient, purpose: 'login', provider_slug: 'rejecting' });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({
      message: 'The verification code could not be sent.',
      data: {
        request_id: expect.stringMatching(UUID),
        status: 'failed',
        expires_at: expect.stringMatching(ISO),
        provider: 'rejecting',
        sender_id: null,
        billing: {
          source: 'connected_provider',
          settlement_status: 'external',
          credits_charged: 0,
        },
      },
    });
    expect(await balance()).toBe(before);
    expect(await inbox(rejecting.url, recipient)).toEqual([]);
  });

  it('refunds the credits of a code the own provider rejects', async () => {
    await setBehaviour(simulatorUrl, { prefix: REJECTED_PREFIX, outcome: 'reject' });
    try {
      const before = await balance();
      const recipient = mobile(REJECTED_PREFIX);
      const response = await send({ recipient, purpose: 'login' });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({
        message: 'The verification code could not be sent.',
        data: {
          request_id: expect.stringMatching(UUID),
          status: 'failed',
          expires_at: expect.stringMatching(ISO),
          provider: 'own',
          sender_id: null,
          billing: { source: 'credits', settlement_status: 'refunded', credits_charged: 0 },
        },
      });
      expect(await creditBalance(stack.sql, tenant.workspaceId)).toEqual({
        balance: before,
        ledgerSum: before,
      });
      const ledger = await stack.sql`
        select reason, amount from credit_ledger
        where otp_request_id = ${response.json().data.request_id} order by id`;
      expect(ledger).toEqual([
        { reason: 'otp_charge', amount: -1 },
        { reason: 'otp_refund', amount: 1 },
      ]);
      expect(await inbox(simulatorUrl, recipient)).toEqual([]);
    } finally {
      await setBehaviour(simulatorUrl, { prefix: REJECTED_PREFIX, outcome: 'accept' });
    }
  });
});
