/**
 * POST /api/v1/messages against the real stack: every validation rule of docs/spec.md §4.1 and §8
 * answers 422 with its exact body, nothing is saved, and each limit is accepted at its bound.
 * Routing is in send-routing.test.ts; counters, receipts and opt-outs in send-lifecycle.test.ts.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { registerSender } from '../../commands/providers/senders.js';
import { insertFailoverRoute, insertProvider, setProviderActive } from '../../db/providers.js';
import { TEST_OPERATOR } from '../support/actors.js';
import {
  inbox,
  invalid,
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

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  // Never sent through: only their flags matter.
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
      settings: { base_url: ownUrl },
    });
  }
  await setProviderActive(stack.sql, tenant.workspaceId, 'retired', false);
  for (const [slug, providerSlugs] of [
    ['own-first', ['own']],
    ['needs-sender', ['own', 'branded']],
    ['switched-off', ['own']],
  ] as const) {
    await insertFailoverRoute(stack.sql, {
      workspaceId: tenant.workspaceId,
      slug,
      name: slug,
      providerSlugs: [...providerSlugs],
    });
  }
  await stack.sql`
    update failover_routes set enabled = false
    where workspace_id = ${tenant.workspaceId} and slug = 'switched-off'`;
  // Senders through `own` are the operator's approved ones (docs/spec.md §4.1 sender_id; issue 24, item 2).
  for (const [provider, sender, approved] of [
    ['own', 'Herald 2026', true],
    ['own', 'Pending', false],
    ['own', 'Soon', false],
    ['branded', 'Branded', true],
  ] as const)
    await registerSender(
      stack.admin,
      { workspace: tenant.slug, provider, sender, approved },
      TEST_OPERATOR,
    );
});

afterAll(async () => {
  await stack?.close();
});

const NOT_APPROVED_FOR_OWN =
  'The selected sender id is not an approved sender of the own provider.';

describe('POST /api/v1/messages validation (docs/spec.md §4.1, §8)', () => {
  const [a, b, c] = numbers(3) as [string, string, string];
  const valid = { recipients: [a], message: 'Hello' };
  const optOut = '{opt_out_url}';

  const cases: [string, unknown, object][] = [
    [
      'recipients missing',
      { message: 'Hi' },
      invalid('recipients', 'The recipients field is required.'),
    ],
    [
      'recipients null',
      { ...valid, recipients: null },
      invalid('recipients', 'The recipients field is required.'),
    ],
    [
      'recipients not an array',
      { ...valid, recipients: a },
      invalid('recipients', 'The recipients field must be an array.'),
    ],
    [
      'recipients empty',
      { ...valid, recipients: [] },
      invalid('recipients', 'The recipients field is required.'),
    ],
    [
      'more than 1,000 recipients',
      { ...valid, recipients: numbers(1001) },
      invalid('recipients', 'The recipients field must have between 1 and 1000 items.'),
    ],
    [
      'a number not in E.164',
      { ...valid, recipients: [a, '0412 345 678'] },
      invalid('recipients.1', 'The recipients.1 field must be a valid E.164 phone number.'),
    ],
    [
      'an E.164-shaped number that does not exist',
      { ...valid, recipients: ['+99912345678'] },
      invalid('recipients.0', 'The recipients.0 field must be a valid E.164 phone number.'),
    ],
    [
      'a recipient that is not a string',
      { ...valid, recipients: [61412345678] },
      invalid('recipients.0', 'The recipients.0 field must be a string.'),
    ],
    [
      'a duplicate recipient',
      { ...valid, recipients: [a, b, c, a] },
      invalid('recipients.3', 'The recipients.3 field has a duplicate value.'),
    ],
    [
      'a duplicate once normalized (trunk 0 after the country code)',
      { ...valid, recipients: [a, a.replace('+61', '+610')] },
      invalid('recipients.1', 'The recipients.1 field has a duplicate value.'),
    ],
    ['message missing', { recipients: [a] }, invalid('message', 'The message field is required.')],
    [
      'message blank',
      { ...valid, message: '  ' },
      invalid('message', 'The message field is required.'),
    ],
    [
      'message not a string',
      { ...valid, message: 42 },
      invalid('message', 'The message field must be a string.'),
    ],
    [
      'message over 1,600 characters',
      { ...valid, message: 'x'.repeat(1601) },
      invalid('message', 'The message field must not be greater than 1600 characters.'),
    ],
    [
      '{opt_out_url} twice in a marketing message',
      { ...valid, message_purpose: 'marketing', message: `Sale! ${optOut} ${optOut}` },
      invalid('message', 'The message field must not contain {opt_out_url} more than once.'),
    ],
    [
      '{opt_out_url} in a transactional message',
      { ...valid, message_purpose: 'transactional', message: `Receipt ${optOut}` },
      invalid(
        'message',
        'The message field may only contain {opt_out_url} when the message purpose is marketing.',
      ),
    ],
    [
      '{opt_out_url} when the purpose defaults to transactional',
      { ...valid, message: `Receipt ${optOut}` },
      invalid(
        'message',
        'The message field may only contain {opt_out_url} when the message purpose is marketing.',
      ),
    ],
    [
      'message_purpose invalid',
      { ...valid, message_purpose: 'promotional' },
      invalid('message_purpose', 'The selected message purpose is invalid.'),
    ],
    [
      'sender_id over 11 characters',
      { ...valid, sender_id: 'HeraldAlerts' },
      invalid('sender_id', 'The sender id field must not be greater than 11 characters.'),
    ],
    [
      'sender_id with other characters',
      { ...valid, sender_id: 'Herald-AU' },
      invalid('sender_id', 'The sender id field must only contain letters, numbers, and spaces.'),
    ],
    [
      'routing_type invalid',
      { ...valid, routing_type: 'round_robin' },
      invalid('routing_type', 'The selected routing type is invalid.'),
    ],
    [
      'failover without failover_route_slug',
      { ...valid, routing_type: 'failover' },
      invalid(
        'failover_route_slug',
        'The failover route slug field is required when routing type is failover.',
      ),
    ],
    [
      'provider_slug together with failover_route_slug',
      {
        ...valid,
        routing_type: 'failover',
        failover_route_slug: 'own-first',
        provider_slug: 'branded',
      },
      invalid(
        'provider_slug',
        'The provider slug field is prohibited when routing type is failover.',
      ),
    ],
    [
      'failover_route_slug with direct routing',
      { ...valid, routing_type: 'direct', failover_route_slug: 'own-first' },
      invalid(
        'failover_route_slug',
        'The failover route slug field is prohibited when routing type is direct.',
      ),
    ],
    [
      'failover_route_slug without routing_type',
      { ...valid, failover_route_slug: 'own-first' },
      invalid(
        'routing_type',
        'The routing type field is required when failover route slug is present.',
      ),
    ],
    [
      'reference over 100 characters',
      { ...valid, reference: 'r'.repeat(101) },
      invalid('reference', 'The reference field must not be greater than 100 characters.'),
    ],
    [
      'unknown provider',
      { ...valid, provider_slug: 'nowhere' },
      invalid('provider_slug', 'The selected provider slug is invalid.'),
    ],
    [
      'disabled provider',
      { ...valid, provider_slug: 'retired' },
      invalid('provider_slug', 'The selected provider slug is invalid.'),
    ],
    [
      'unknown failover route',
      { ...valid, routing_type: 'failover', failover_route_slug: 'nowhere' },
      invalid('failover_route_slug', 'The selected failover route slug is invalid.'),
    ],
    [
      'disabled failover route',
      { ...valid, routing_type: 'failover', failover_route_slug: 'switched-off' },
      invalid('failover_route_slug', 'The selected failover route slug is invalid.'),
    ],
    [
      'no sender_id for a provider that requires one',
      { ...valid, provider_slug: 'branded' },
      invalid('sender_id', 'The sender id field is required for the selected provider.'),
    ],
    [
      'no sender_id for a failover route with a provider that requires one',
      { ...valid, routing_type: 'failover', failover_route_slug: 'needs-sender' },
      invalid('sender_id', 'The sender id field is required for the selected failover route.'),
    ],
  ];

  it.each(cases)('422 for %s', async (_name, body, expected) => {
    const response = await postMessages(stack, tenant.token, body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(expected);
  });

  const nonObjects: [string, unknown][] = [
    ['an array', [valid]],
    ['a string', 'hello'],
    ['a number', 42],
    ['null', null],
    ['missing', undefined],
  ];
  it.each(nonObjects)('422 when the body is %s', async (_name, body) => {
    const response = await postMessages(stack, tenant.token, body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(invalid('body', 'The request body must be a JSON object.'));
  });

  it.each([
    ['malformed', '{"recipients": ['],
    ['empty', ''],
  ])('422 when the JSON body is %s', async (_name, payload) => {
    for (const url of ['/api/v1/messages', '/api/v1/otp/send', '/api/v1/otp/verify']) {
      const response = await stack.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        payload,
      });
      expect(response.statusCode, url).toBe(422);
      expect(response.json()).toEqual(invalid('body', 'The request body must be valid JSON.'));
    }
  });

  it('reports every failing field at once, the first as the message', async () => {
    const response = await postMessages(stack, tenant.token, {
      recipients: [a, 'nope'],
      message: 'x'.repeat(1601),
      sender_id: 'Too-long-sender',
      reference: 'r'.repeat(101),
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'The recipients.1 field must be a valid E.164 phone number. (and 4 more errors)',
      errors: {
        'recipients.1': ['The recipients.1 field must be a valid E.164 phone number.'],
        message: ['The message field must not be greater than 1600 characters.'],
        sender_id: [
          'The sender id field must not be greater than 11 characters.',
          'The sender id field must only contain letters, numbers, and spaces.',
        ],
        reference: ['The reference field must not be greater than 100 characters.'],
      },
    });
  });

  it('saves nothing for a rejected request', async () => {
    const [before] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from campaigns where workspace_id = ${tenant.workspaceId}`;
    expect((await postMessages(stack, tenant.token, { recipients: [a] })).statusCode).toBe(422);
    expect(
      (await postMessages(stack, tenant.token, { ...valid, provider_slug: 'nowhere' })).statusCode,
    ).toBe(422);
    const [after] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from campaigns where workspace_id = ${tenant.workspaceId}`;
    expect(after?.count).toBe(before?.count);
  });

  it('accepts every limit exactly at its bound, counting characters as code points', async () => {
    const [r1, r2] = numbers(2) as [string, string];
    const message = '😀'.repeat(1600); // 3,200 UTF-16 units, 1,600 characters
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [r1, r2],
        message,
        message_purpose: null,
        sender_id: 'Herald 2026',
        routing_type: null,
        provider_slug: null,
        failover_route_slug: null,
        reference: 'r'.repeat(100),
      },
      { total: 2, reference: 'r'.repeat(100) },
    );
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({ sent_count: 2 });
    for (const recipient of [r1, r2]) {
      expect(
        (await inbox(ownUrl, recipient)).map(({ to, from, body }) => ({ to, from, body })),
      ).toEqual([{ to: recipient, from: 'Herald 2026', body: message }]);
    }
  });

  it('accepts 1,000 recipients and submits each once', async () => {
    const bulk = await simulatorProvider(stack, tenant.workspaceId, 'bulk');
    try {
      const recipients = numbers(1000);
      const id = await sendQueued(
        stack,
        tenant.token,
        { recipients, message: 'Bulk', provider_slug: 'bulk' },
        { total: 1000 },
      );
      expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({
        total_recipients: 1000,
        queued_count: 0,
        sent_count: 1000,
        failed_count: 0,
      });
      const all = await fetch(`${bulk.url}/v1/inbox`);
      const received = ((await all.json()) as { messages: { to: string }[] }).messages;
      expect(received.map((message) => message.to).sort()).toEqual([...recipients].sort());
    } finally {
      await bulk.close();
    }
  });
});

describe('sender ids through own (issue 24, item 2)', () => {
  const [a] = numbers(1) as [string];
  const valid = { recipients: [a], message: 'Hello' };

  it.each([
    ['an unregistered sender, by the key without routing', { sender_id: 'CommBank' }],
    ['an unregistered sender, with own named', { sender_id: 'ATO', provider_slug: 'own' }],
    ['an unregistered number', { sender_id: '61400000000' }],
    ['a sender pending approval', { sender_id: 'Pending' }],
    ['a sender approved for another provider only', { sender_id: 'Branded' }],
    [
      'an unregistered sender on a failover route through own',
      { sender_id: 'CommBank', routing_type: 'failover', failover_route_slug: 'own-first' },
    ],
    [
      'a sender on a route through own, approved only for its other provider',
      { sender_id: 'Branded', routing_type: 'failover', failover_route_slug: 'needs-sender' },
    ],
  ])('422 on sender_id for %s, and saves nothing', async (_name, change) => {
    const [before] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from campaigns where workspace_id = ${tenant.workspaceId}`;
    const response = await postMessages(stack, tenant.token, { ...valid, ...change });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(invalid('sender_id', NOT_APPROVED_FOR_OWN));
    const [after] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from campaigns where workspace_id = ${tenant.workspaceId}`;
    expect(after?.count).toBe(before?.count);
  });

  it("refuses a sender another workspace's operator approved", async () => {
    const other = await createTenant(stack.admin);
    await registerSender(
      stack.admin,
      {
        workspace: other.slug,
        provider: 'own',
        sender: 'Elsewhere',
      },
      TEST_OPERATOR,
    );
    const response = await postMessages(stack, tenant.token, { ...valid, sender_id: 'Elsewhere' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(invalid('sender_id', NOT_APPROVED_FOR_OWN));
  });

  it('sends from a sender once the operator approves it', async () => {
    const [recipient] = numbers(1) as [string];
    const body = { recipients: [recipient], message: 'Approved now', sender_id: 'Soon' };
    expect((await postMessages(stack, tenant.token, body)).statusCode).toBe(422);
    await registerSender(
      stack.admin,
      { workspace: tenant.slug, provider: 'own', sender: 'Soon' },
      TEST_OPERATOR,
    );
    const id = await sendQueued(stack, tenant.token, body, { total: 1 });
    expect(await waitForCompletion(stack, tenant.token, id)).toMatchObject({ sent_count: 1 });
    expect((await inbox(ownUrl, recipient)).map(({ from, body }) => ({ from, body }))).toEqual([
      { from: 'Soon', body: 'Approved now' },
    ]);
  });
});
