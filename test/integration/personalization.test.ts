/**
 * Personalised sends (issue 27, item 4) against the real stack: `personalization` on
 * POST /api/v1/messages is validated per recipient with exact 422 bodies and nothing saved, each
 * recipient's rendered text is stored on its message row and reaches the simulator as rendered
 * (with its own opt-out link), and segments are counted per rendered text against the daily cap.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setGuard, showGuard } from '../../commands/fraud-guard/settings.js';
import { eraseRecipient } from '../../db/recipient-erasure.js';
import { dropCampaignPersonalData } from '../../db/retention.js';
import { maskedNumber } from '../../domain/phone.js';
import { TEST_OPERATOR } from '../support/actors.js';
import {
  type InboxMessage,
  invalid,
  numbers,
  postMessages,
  queuedResponse,
  waitForCompletion,
} from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
let stack: Stack;

beforeAll(async () => {
  stack = await openStack();
});

afterAll(async () => {
  await stack?.close();
});

/** Every inbox entry the simulator holds for these numbers. */
async function inboxOf(recipients: readonly string[]): Promise<InboxMessage[]> {
  const wanted = new Set(recipients);
  const response = await fetch(`${simulatorUrl}/v1/inbox`);
  const { messages } = (await response.json()) as { messages: InboxMessage[] };
  return messages.filter((message) => wanted.has(message.to));
}

/** A workflow history's JSON with its base64 payloads decoded beside it. */
function readable(historyJson: string): string {
  const decoded = [...historyJson.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map(([, data]) =>
    Buffer.from(data as string, 'base64').toString('utf8'),
  );
  return [historyJson, ...decoded].join('\n');
}

/**
 * Sends and expects the 202 whose queue part is exact (the campaign object is send-rules'
 * concern); returns the campaign id.
 */
async function sendQueued(
  _stack: Stack,
  token: string,
  body: Record<string, unknown>,
  expected: { total: number },
): Promise<number> {
  const response = await postMessages(stack, token, body);
  expect(response.statusCode).toBe(202);
  const { data } = response.json();
  expect(data.queue).toEqual(queuedResponse(expected).data.queue);
  expect(data.message).toMatchObject({ id: data.queue.campaign_id, status: 'queued' });
  return data.message.id;
}

async function campaignsOf(tenant: Tenant): Promise<number> {
  const [row] = await stack.sql<{ count: number }[]>`
    select count(*)::int as count from campaigns where workspace_id = ${tenant.workspaceId}`;
  return row?.count ?? 0;
}

function messageTexts(campaignId: number) {
  return stack.sql<{ recipient: string; body: string | null; segments: number | null }[]>`
    select recipient, body, segments from campaign_messages
    where campaign_id = ${campaignId} order by seq`;
}

describe('personalization validation', () => {
  const [a, b] = numbers(2) as [string, string];
  const message = 'Hi {{first_name}}';
  const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`v${index}`, 'x']));

  const cases: [string, unknown, object][] = [
    [
      'not an object',
      { recipients: [a], message, personalization: 'Ada' },
      invalid('personalization', 'The personalization field must be an object.'),
    ],
    [
      "a recipient's variables not an object",
      { recipients: [a], message, personalization: { [a]: ['Ada'] } },
      invalid(`personalization.${a}`, `The personalization.${a} field must be an object.`),
    ],
    [
      'a bad variable name',
      { recipients: [a], message, personalization: { [a]: { 'First Name': 'Ada' } } },
      invalid(
        `personalization.${a}`,
        `The personalization.${a} field has an invalid variable name "First Name": a lowercase letter, then up to 31 lowercase letters, digits or underscores.`,
      ),
    ],
    [
      'more than 20 variables',
      { recipients: [a], message, personalization: { [a]: { first_name: 'Ada', ...tooMany } } },
      invalid(
        `personalization.${a}`,
        `The personalization.${a} field must not have more than 20 variables.`,
      ),
    ],
    [
      'a value that is not a string',
      { recipients: [a], message, personalization: { [a]: { first_name: 7 } } },
      invalid(
        `personalization.${a}.first_name`,
        `The personalization.${a}.first name field must be a string.`,
      ),
    ],
    [
      'a value holding the opt-out placeholder',
      {
        recipients: [a],
        message: 'Hi {{first_name}} {opt_out_url}',
        message_purpose: 'marketing',
        personalization: { [a]: { first_name: '{opt_out_url}' } },
      },
      invalid(
        `personalization.${a}.first_name`,
        `The personalization.${a}.first name field must not contain {opt_out_url}.`,
      ),
    ],
    [
      'a recipient not in the list',
      {
        recipients: [a],
        message,
        personalization: { [a]: { first_name: 'Ada' }, [b]: { first_name: 'Bo' } },
      },
      invalid(
        `personalization.${b}`,
        `The personalization.${b} field must be one of the recipients.`,
      ),
    ],
    [
      'a key that is not a phone number',
      { recipients: [a], message, personalization: { [a]: { first_name: 'Ada' }, ada: {} } },
      invalid(
        'personalization.ada',
        'The personalization.ada field must be one of the recipients.',
      ),
    ],
    [
      'a variable missing for a recipient with an entry',
      {
        recipients: [a],
        message: 'Hi {{first_name}}, order {{order}}',
        personalization: { [a]: { first_name: 'Ada' } },
      },
      invalid(
        `personalization.${a}`,
        `The personalization.${a} field has no value for {{order}}, used in the message.`,
      ),
    ],
    [
      'a recipient without an entry',
      { recipients: [a, b], message, personalization: { [a]: { first_name: 'Ada' } } },
      invalid(
        `personalization.${b}`,
        `The personalization.${b} field has no value for {{first_name}}, used in the message.`,
      ),
    ],
    [
      'a rendered text over 1,600 characters',
      {
        recipients: [a],
        message,
        personalization: { [a]: { first_name: 'x'.repeat(1598) } },
      },
      invalid(
        `personalization.${a}`,
        `The personalization.${a} field makes the message longer than 1600 characters.`,
      ),
    ],
    [
      'a rendered text that is blank',
      { recipients: [a], message: '{{first_name}}', personalization: { [a]: { first_name: ' ' } } },
      invalid(`personalization.${a}`, `The personalization.${a} field makes the message blank.`),
    ],
    [
      'a placeholder that is not a variable name',
      {
        recipients: [a],
        message: 'Hi {{First}}',
        personalization: { [a]: { first_name: 'Ada' } },
      },
      invalid(
        'message',
        'The message field has {{First}}, which is not a variable name: use {{name}} with a lowercase letter, then up to 31 lowercase letters, digits or underscores.',
      ),
    ],
  ];

  it.each(cases)('%s: 422 with its exact body, nothing saved', async (_name, body, expected) => {
    const tenant = await createTenant(stack.admin);
    const response = await postMessages(stack, tenant.token, body);
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status: 422,
      body: expected,
    });
    expect(await campaignsOf(tenant)).toBe(0);
  });

  it('reports every recipient missing a variable, each under its own key', async () => {
    const tenant = await createTenant(stack.admin);
    const response = await postMessages(stack, tenant.token, {
      recipients: [a, b],
      message: 'Hi {{first_name}} from {{city}}',
      personalization: { [a]: { first_name: 'Ada' } },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: `The personalization.${a} field has no value for {{city}}, used in the message. (and 1 more error)`,
      errors: {
        [`personalization.${a}`]: [
          `The personalization.${a} field has no value for {{city}}, used in the message.`,
        ],
        [`personalization.${b}`]: [
          `The personalization.${b} field has no value for {{first_name}}, {{city}}, used in the message.`,
        ],
      },
    });
  });

  it('accepts a rendered text of exactly 1,600 characters, and ignores variables the message does not use', async () => {
    const tenant = await createTenant(stack.admin);
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [a],
        message,
        personalization: { [a]: { first_name: 'x'.repeat(1597), unused: 'y' } },
      },
      { total: 1 },
    );
    expect(await messageTexts(id)).toEqual([
      { recipient: a, body: `Hi ${'x'.repeat(1597)}`, segments: 11 },
    ]);
  });
});

describe('personalised sends', () => {
  it('sends each recipient its own text, stored on its message row, with its own opt-out link', async () => {
    const tenant = await createTenant(stack.admin);
    const [a, b, c] = numbers(3) as [string, string, string];
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        // The trunk 0 after the country code is normalized: the key still names `a`.
        recipients: [a, b, c],
        message: 'Hi {{first_name}}, {{first_name}}! Stop: {opt_out_url}',
        message_purpose: 'marketing',
        personalization: {
          [a.replace('+61', '+610')]: { first_name: 'Adalinde' },
          [b]: { first_name: '{{first_name}} $& Bo' },
          [c]: { first_name: 'Zoë' },
        },
      },
      { total: 3 },
    );
    expect(await messageTexts(id)).toEqual([
      { recipient: a, body: 'Hi Adalinde, Adalinde! Stop: {opt_out_url}', segments: 1 },
      {
        recipient: b,
        body: 'Hi {{first_name}} $& Bo, {{first_name}} $& Bo! Stop: {opt_out_url}',
        segments: 1,
      },
      { recipient: c, body: 'Hi Zoë, Zoë! Stop: {opt_out_url}', segments: 1 },
    ]);
    const [campaign] = await stack.sql<{ body: string; segments: number | null }[]>`
      select body, segments from campaigns where id = ${id}`;
    expect(campaign).toEqual({
      body: 'Hi {{first_name}}, {{first_name}}! Stop: {opt_out_url}',
      segments: null,
    });
    await waitForCompletion(stack, tenant.token, id);
    // The worker's PUBLIC_URL, not the api's: any origin.
    const link = 'http://[^/]+/o/[0-9A-Za-z]{10}';
    const bodies = Object.fromEntries(
      (await inboxOf([a, b, c])).map((message) => [message.to, message.body]),
    );
    expect(bodies).toEqual({
      [a]: expect.stringMatching(new RegExp(`^Hi Adalinde, Adalinde! Stop: ${link}$`)),
      [b]: expect.stringMatching(
        new RegExp(
          `^Hi \\{\\{first_name\\}\\} \\$& Bo, \\{\\{first_name\\}\\} \\$& Bo! Stop: ${link}$`,
        ),
      ),
      [c]: expect.stringMatching(new RegExp(`^Hi Zoë, Zoë! Stop: ${link}$`)),
    });
    // Activities read the texts from Postgres: the workflow's history carries ids only.
    const [{ workflowId }] = (await stack.sql`
      select workflow_id from campaigns where id = ${id}`) as [{ workflowId: string }];
    const history = readable(
      JSON.stringify(await stack.temporal.workflow.getHandle(workflowId).fetchHistory()),
    );
    expect(history).toContain(String(id));
    expect(history).not.toContain('Adalinde');
  });

  it('leaves {{…}} as plain text in a send without personalization', async () => {
    const tenant = await createTenant(stack.admin);
    const [a] = numbers(1) as [string];
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients: [a], message: 'Use {{code}} as is' },
      { total: 1 },
    );
    expect(await messageTexts(id)).toEqual([{ recipient: a, body: null, segments: null }]);
    await waitForCompletion(stack, tenant.token, id);
    expect((await inboxOf([a])).map((message) => message.body)).toEqual(['Use {{code}} as is']);
  });

  it('counts segments per rendered text against the daily cap', async () => {
    const tenant = await createTenant(stack.admin);
    const [a, b, c, d, e] = numbers(5) as [string, string, string, string, string];
    const personalised = (recipients: string[], names: string[]) => ({
      recipients,
      message: 'Hi {{name}}',
      personalization: Object.fromEntries(
        recipients.map((recipient, index) => [recipient, { name: names[index] }]),
      ),
    });
    // 1 segment for `a`, 2 for `b` (161 GSM-7 characters): 3, where the template alone is 1 each.
    const long = 'x'.repeat(158);
    const first = await sendQueued(stack, tenant.token, personalised([a, b], ['Ada', long]), {
      total: 2,
    });
    expect((await messageTexts(first)).map((row) => row.segments)).toEqual([1, 2]);
    // Set afterwards: the day's use is counted from the message rows.
    await setGuard(stack.admin, { workspace: tenant.slug, dailySegments: '4' }, TEST_OPERATOR);
    expect((await showGuard(stack.admin, { workspace: tenant.slug })).dailySegmentsUsed).toBe(3);

    const refused = await postMessages(stack, tenant.token, personalised([c], [long]));
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      message: expect.stringMatching(
        /^The workspace's daily cap of 4 segments would be exceeded; it resets at \d{4}-\d\d-\d\dT00:00:00\.000Z\.$/,
      ),
    });
    await sendQueued(stack, tenant.token, personalised([d], ['Di']), { total: 1 });
    expect((await showGuard(stack.admin, { workspace: tenant.slug })).dailySegmentsUsed).toBe(4);
    const full = await postMessages(stack, tenant.token, personalised([e], ['Ed']));
    expect(full.statusCode).toBe(429);
  });

  it('sends 1,000 recipients each their own text: every simulator inbox entry is right', async () => {
    const tenant = await createTenant(stack.admin);
    const recipients = numbers(1000);
    const personalization = Object.fromEntries(
      recipients.map((recipient, index) => [
        recipient,
        { name: `Customer ${index}`, code: recipient.slice(-4) },
      ]),
    );
    const id = await sendQueued(
      stack,
      tenant.token,
      { recipients, message: 'Hello {{name}}, your code ends {{code}}.', personalization },
      { total: 1000 },
    );
    const done = await waitForCompletion(stack, tenant.token, id);
    expect(done).toMatchObject({ sent_count: 1000, failed_count: 0 });
    const entries = await inboxOf(recipients);
    expect(entries).toHaveLength(1000);
    const expected = new Map(
      recipients.map((recipient, index) => [
        recipient,
        `Hello Customer ${index}, your code ends ${recipient.slice(-4)}.`,
      ]),
    );
    const wrong = entries.filter((entry) => entry.body !== expected.get(entry.to));
    expect(wrong).toEqual([]);
    expect(new Set(entries.map((entry) => entry.to)).size).toBe(1000);
  });
});

describe('personal data in rendered texts', () => {
  it('erasing a number empties its own text and masks it where another text quotes it; retention empties the rest', async () => {
    const tenant = await createTenant(stack.admin);
    const [a, b, c] = numbers(3) as [string, string, string];
    const id = await sendQueued(
      stack,
      tenant.token,
      {
        recipients: [a, b, c],
        message: 'Hi {{name}}, call {{contact}}',
        personalization: {
          [a]: { name: 'Ann', contact: '+61200000000' },
          [b]: { name: 'Bob', contact: a },
          [c]: { name: 'Cat', contact: a.slice(1) },
        },
      },
      { total: 3 },
    );
    await waitForCompletion(stack, tenant.token, id);
    const erased = await eraseRecipient(stack.sql, {
      number: a,
      workspaceId: tenant.workspaceId,
      erasedForm: `erased-${a}`,
    });
    expect(erased.texts).toBe(2);
    expect(await messageTexts(id)).toEqual([
      { recipient: maskedNumber(a), body: '', segments: 1 },
      { recipient: b, body: `Hi Bob, call ${maskedNumber(a)}`, segments: 1 },
      { recipient: c, body: `Hi Cat, call ${maskedNumber(a)}`, segments: 1 },
    ]);

    // Older than any window a test uses: only this campaign is due.
    await stack.sql`update campaigns set created_at = now() - interval '5000 days' where id = ${id}`;
    while ((await dropCampaignPersonalData(stack.sql, 4000, 100)) > 0);
    expect(await messageTexts(id)).toEqual([
      { recipient: maskedNumber(a), body: '', segments: 1 },
      { recipient: maskedNumber(b), body: '', segments: 1 },
      { recipient: maskedNumber(c), body: '', segments: 1 },
    ]);
  });
});

describe('the OpenAPI document', () => {
  it('describes personalization with its limits and an example', async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const { schema } =
      response.json().paths['/api/v1/messages'].post.requestBody.content['application/json'];
    expect(schema.properties.personalization.anyOf[0]).toMatchObject({
      type: 'object',
      propertyNames: { pattern: '^\\+[1-9][0-9]{7,14}$' },
      additionalProperties: {
        type: 'object',
        propertyNames: { pattern: '^[a-z][a-z0-9_]{0,31}$' },
        maxProperties: 20,
        additionalProperties: { type: 'string', maxLength: 1600, pattern: '^[^\\u0000]*$' },
      },
    });
    expect(schema.properties.personalization.anyOf[0].examples).toEqual([
      {
        '+61412345678': { first_name: 'Ada', order: 'A-1001' },
        '+61412345679': { first_name: 'Grace', order: 'A-1002' },
      },
    ]);
  });
});
