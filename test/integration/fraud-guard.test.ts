/**
 * The fraud guard (docs/fraud-guard.md "Fraud guard"): per-recipient OTP limits, geo permissions, the range
 * breaker, the daily cap and the API rate limits, each with its exact answer, counted where the
 * user would count (the simulator's inbox, the rows saved), over two api instances with their own
 * pools where concurrency matters.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import { setGuard, showGuard, unblockRange } from '../../commands/fraud-guard/settings.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { addCredits } from '../../db/credits.js';
import { buildApp } from '../../server/app.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { inbox } from '../support/send.js';
import {
  createTenant,
  openStack,
  PUBLIC_URL,
  type Stack,
  signInOtpService,
  type Tenant,
} from '../support/stack.js';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

const simulatorUrl = inject('simulatorUrl');

let stack: Stack;
let receiver: WebhookReceiver;
const replicas: { app: ReturnType<typeof buildApp>; sql: Sql }[] = [];
let rangeSeed = Math.floor(Math.random() * 90);
/** A range under +61476, which no other test file uses: `+61476RR`, then 4 digits. */
const freshRange = () => `+61476${10 + (rangeSeed++ % 90)}`;
/** A number no other test sends to: the simulator's inbox is shared by the run. */
const freshNumber = () =>
  `${freshRange()}${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;

async function tenantWithCredits(): Promise<Tenant> {
  const tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 1000);
  return tenant;
}

function post(tenant: { token: string }, url: string, payload: object, replica = 0) {
  return (replicas[replica] as (typeof replicas)[number]).app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${tenant.token}` },
    payload,
  });
}

/** A code for `recipient`, for the purpose `login` or through an OTP service. */
const sendCode = (tenant: Tenant, recipient: string, replica = 0, service?: string) =>
  post(
    tenant,
    '/api/v1/otp/send',
    service ? { recipient, service_slug: service } : { recipient, purpose: 'login' },
    replica,
  );

/** The inbox once none of the recipient's sends is still `pending` (on its way). */
async function settledInbox(recipient: string) {
  await expect
    .poll(
      async () =>
        (
          (await stack.sql`
            select count(*)::int as pending from otp_requests
            where recipient = ${recipient} and status = 'pending'`) as [{ pending: number }]
        )[0].pending,
      { timeout: 30_000 },
    )
    .toBe(0);
  return inbox(simulatorUrl, recipient);
}

const codeIn = async (recipient: string) =>
  /(\d{6})/.exec((await settledInbox(recipient)).at(-1)?.body ?? '')?.[1] as string;

/**
 * An endpoint of the tenant's for `event` at this test's receiver: `delivered()` is the one
 * event it got, verified with the official Standard Webhooks library.
 */
async function subscribe(tenant: Tenant, event: string) {
  const path = `/${tenant.slug}/${event}`;
  const context = { ...stack.admin, env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true } };
  const created = await webhookCreate(context, {
    workspace: tenant.slug,
    url: `${receiver.url}${path}`,
    events: event,
  });
  const { secret } = created.json as { secret: string };
  return {
    async delivered() {
      const [request] = await receiver.waitFor(path, 1, 30_000);
      const { body, headers } = request as ReceivedWebhook;
      return new Webhook(secret).verify(body, {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      });
    },
  };
}

beforeAll(async () => {
  stack = await openStack();
  receiver = await startWebhookReceiver();
  for (let replica = 0; replica < 2; replica++) {
    const sql = createSql(inject('databaseUrl'), { max: 20 });
    const app = buildApp(
      {
        env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL }),
        publicUrl: PUBLIC_URL,
        secret: inject('secret'),
        sql,
        temporal: stack.temporal,
      },
      { logger: false },
    );
    replicas.push({ app, sql });
  }
});

afterAll(async () => {
  await receiver.close();
  for (const { app, sql } of replicas) {
    await app.close();
    await sql.end();
  }
  await stack.close();
});

describe('per-recipient OTP limits', () => {
  it('answers the 6th send to one number within 15 minutes 429 with Retry-After, by default', async () => {
    const tenant = await tenantWithCredits();
    const recipient = freshNumber();
    for (let send = 1; send <= 5; send++)
      expect((await sendCode(tenant, recipient)).statusCode).toBe(202);
    const refused = await sendCode(tenant, recipient);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      message: expect.stringMatching(
        /^Too many codes were sent to this recipient\. Try again in \d+ seconds\.$/,
      ),
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(890);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(await settledInbox(recipient)).toHaveLength(5);
  });

  it('sends exactly 5 of 30 concurrent sends to one number over two api instances', async () => {
    const tenant = await tenantWithCredits();
    const recipient = freshNumber();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => sendCode(tenant, recipient, index % 2)),
    );
    // Every answer with its body, so an unexpected one shows why.
    const outcomes = answers.map((answer) => `${answer.statusCode} ${answer.json().message}`);
    expect(outcomes.filter((outcome) => outcome.startsWith('202'))).toHaveLength(5);
    expect(outcomes.filter((outcome) => !outcome.startsWith('202'))).toEqual(
      Array(25).fill(expect.stringMatching(/^429 Too many codes were sent to this recipient\./)),
    );
    expect(await settledInbox(recipient)).toHaveLength(5);
  });

  it('never counts an idempotent replay', async () => {
    const tenant = await tenantWithCredits();
    const recipient = freshNumber();
    const keyed = (key: string) =>
      replicas[0]?.app.inject({
        method: 'POST',
        url: '/api/v1/otp/send',
        headers: { authorization: `Bearer ${tenant.token}`, 'idempotency-key': key },
        payload: { recipient, purpose: 'login' },
      });
    for (let replay = 0; replay < 6; replay++)
      expect((await keyed('one-request'))?.statusCode).toBe(202);
    for (let send = 2; send <= 5; send++)
      expect((await sendCode(tenant, recipient)).statusCode).toBe(202);
    expect((await sendCode(tenant, recipient)).statusCode).toBe(429);
  });

  it('takes an OTP service’s own limit over its workspace’s', async () => {
    const tenant = await tenantWithCredits();
    const service = await signInOtpService(stack.admin, tenant.slug);
    await setGuard(
      stack.admin,
      {
        workspace: tenant.slug,
        otpService: service.slug,
        otpPerRecipient: '1/15m',
      },
      TEST_OPERATOR,
    );
    const recipient = freshNumber();
    expect((await sendCode(tenant, recipient, 0, service.slug)).statusCode).toBe(202);
    expect((await sendCode(tenant, recipient, 0, service.slug)).statusCode).toBe(429);
    // The workspace's own limit (5) still lets the send without the service through.
    expect((await sendCode(tenant, recipient)).statusCode).toBe(202);
  });
});

describe('geo permissions', () => {
  it('refuses an OTP recipient outside the allowed countries on `recipient`', async () => {
    const tenant = await tenantWithCredits();
    await setGuard(stack.admin, { workspace: tenant.slug, countries: 'NZ' }, TEST_OPERATOR);
    const refused = await sendCode(tenant, freshNumber());
    const message = 'The recipient field is in a country this workspace does not send to for OTP.';
    expect([refused.statusCode, refused.json()]).toEqual([
      422,
      { message, errors: { recipient: [message] } },
    ]);
  });

  it('refuses SMS recipients in a blocked range on each `recipients.N`', async () => {
    const tenant = await tenantWithCredits();
    const blocked = freshRange();
    await setGuard(
      stack.admin,
      { workspace: tenant.slug, blockPrefix: `default,${blocked}` },
      TEST_OPERATOR,
    );
    const refused = await post(tenant, '/api/v1/messages', {
      recipients: [freshNumber(), `${blocked}0002`],
      message: 'Hello',
    });
    const message = `The recipients.1 field is in a blocked number range (${blocked}) for SMS.`;
    expect([refused.statusCode, refused.json()]).toEqual([
      422,
      { message, errors: { 'recipients.1': [message] } },
    ]);
    const otp = await sendCode(tenant, `${blocked}0003`);
    expect(otp.json().errors).toEqual({
      recipient: [`The recipient field is in a blocked number range (${blocked}) for OTP.`],
    });
  });
});

describe('geo permissions at the largest send', () => {
  it('refuses only the blocked one of 1,000 recipients, on its index', async () => {
    const tenant = await tenantWithCredits();
    const blocked = freshRange();
    await setGuard(
      stack.admin,
      { workspace: tenant.slug, blockPrefix: `default,${blocked}` },
      TEST_OPERATOR,
    );
    const open = freshRange();
    const recipients = Array.from(
      { length: 999 },
      (_, index) => `${open}${String(index).padStart(4, '0')}`,
    );
    const refused = await post(tenant, '/api/v1/messages', {
      recipients: [...recipients, `${blocked}0999`],
      message: 'Hello',
    });
    const message = `The recipients.999 field is in a blocked number range (${blocked}) for SMS.`;
    expect([refused.statusCode, refused.json()]).toEqual([
      422,
      { message, errors: { 'recipients.999': [message] } },
    ]);
  });
});

describe('the range breaker', () => {
  it('blocks a range once its unverified sends reach the threshold, records the trip once, and lifts on unblock', async () => {
    const tenant = await tenantWithCredits();
    await setGuard(
      stack.admin,
      {
        workspace: tenant.slug,
        otpPerRecipient: 'off',
        rangeBreaker: '3/1h@50%,1h',
      },
      TEST_OPERATOR,
    );
    const hook = await subscribe(tenant, 'otp.range_blocked');
    const range = freshRange();
    for (let number = 1; number <= 3; number++)
      expect((await sendCode(tenant, `${range}000${number}`)).statusCode).toBe(202);
    const trips = await Promise.all(
      [4, 5, 6, 7].map((number) => sendCode(tenant, `${range}000${number}`, number % 2)),
    );
    for (const trip of trips) {
      expect(trip.statusCode).toBe(429);
      expect(trip.json().message).toMatch(
        new RegExp(`^Codes to numbers starting \\${range} are paused until `),
      );
      expect(Number(trip.headers['retry-after'])).toBeGreaterThan(3590);
    }
    const audit = await stack.sql`
      select actor, source, target from audit_log
      where workspace_id = ${tenant.workspaceId} and action = 'otp.range_blocked'`;
    expect(audit).toEqual([{ actor: 'fraud guard', source: 'guard', target: `range ${range}` }]);
    expect(await hook.delivered()).toMatchObject({
      type: 'otp.range_blocked',
      data: { range, sends: 3, verified: 0, window_seconds: 3600 },
    });
    // Another range goes on.
    expect((await sendCode(tenant, `${freshRange()}0001`)).statusCode).toBe(202);

    const view = await showGuard(stack.admin, { workspace: tenant.slug });
    expect(view.blockedRanges.map((block) => block.range)).toEqual([range]);
    await unblockRange(stack.admin, { workspace: tenant.slug, range }, TEST_OPERATOR);
    expect((await sendCode(tenant, `${range}0008`)).statusCode).toBe(202);
  });

  it('leaves a range whose codes are verified open', async () => {
    const tenant = await tenantWithCredits();
    await setGuard(
      stack.admin,
      { workspace: tenant.slug, rangeBreaker: '3/1h@50%,1h' },
      TEST_OPERATOR,
    );
    const range = freshRange();
    for (let number = 1; number <= 3; number++) {
      const recipient = `${range}000${number}`;
      const sent = await sendCode(tenant, recipient);
      expect(sent.statusCode).toBe(202);
      if (number < 3) {
        const verified = await post(tenant, '/api/v1/otp/verify', {
          recipient,
          code: await codeIn(recipient),
          request_id: sent.json().data.request_id,
        });
        expect(verified.statusCode).toBe(200);
      }
    }
    expect((await sendCode(tenant, `${range}0004`)).statusCode).toBe(202);
  });
});

describe('the daily cap', () => {
  it('refuses a campaign that would cross it whole, then OTP sends, and announces the threshold once', async () => {
    const tenant = await tenantWithCredits();
    await setGuard(stack.admin, { workspace: tenant.slug, dailySegments: '5' }, TEST_OPERATOR);
    const hook = await subscribe(tenant, 'spend.cap_near');
    const campaign = (count: number) =>
      post(tenant, '/api/v1/messages', {
        recipients: Array.from({ length: count }, (_, index) => `${freshRange()}000${index}`),
        message: 'Hello',
      });
    expect((await campaign(3)).statusCode).toBe(202);
    const refused = await campaign(3);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      message: expect.stringMatching(
        /^The workspace's daily cap of 5 segments would be exceeded; it resets at \d{4}-\d\d-\d\dT00:00:00\.000Z\.$/,
      ),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const [{ campaigns }] = (await stack.sql`
      select count(*)::int as campaigns from campaigns where workspace_id = ${tenant.workspaceId}`) as [
      { campaigns: number },
    ];
    expect(campaigns).toBe(1);
    expect((await sendCode(tenant, freshNumber())).statusCode).toBe(202);
    expect((await sendCode(tenant, freshNumber())).statusCode).toBe(202);
    expect((await sendCode(tenant, freshNumber())).statusCode).toBe(429);
    expect(await hook.delivered()).toMatchObject({
      type: 'spend.cap_near',
      data: { cap_segments: 5, used_segments: 4, threshold_percent: 80 },
    });
  });
});

describe('API rate limits', () => {
  it('lets exactly the bucket through across two api instances, with the draft’s fields', async () => {
    const tenant = await tenantWithCredits();
    await setGuard(stack.admin, { workspace: tenant.slug, keyRate: '5/m' }, TEST_OPERATOR);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        replicas[index % 2]?.app.inject({
          method: 'GET',
          url: '/api/v1/messages/1',
          headers: { authorization: `Bearer ${tenant.token}` },
        }),
      ),
    );
    const limited = answers.filter((answer) => answer?.statusCode === 429);
    expect(answers.length - limited.length).toBe(5);
    const first = limited[0];
    expect(first?.json()).toEqual({
      message: expect.stringMatching(
        /^The rate limit of this API key is reached\. Retry after \d+ seconds\.$/,
      ),
    });
    expect(Number(first?.headers['retry-after'])).toBeGreaterThan(0);
    expect(first?.headers['ratelimit-policy']).toBe('"key";q=5;w=60, "workspace";q=300;w=1');
    expect(first?.headers.ratelimit).toMatch(/^"key";r=0;t=\d+, "workspace";r=\d+;t=\d+$/);
  });

  it('holds all the workspace’s keys to one workspace bucket', async () => {
    const tenant = await tenantWithCredits();
    await setGuard(
      stack.admin,
      { workspace: tenant.slug, keyRate: 'off', workspaceRate: '4/m' },
      TEST_OPERATOR,
    );
    const other = await tenant.keyWith(['messages:read']);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        replicas[index % 2]?.app.inject({
          method: 'GET',
          url: '/api/v1/messages/1',
          headers: { authorization: `Bearer ${index % 3 ? tenant.token : other.token}` },
        }),
      ),
    );
    expect(answers.filter((answer) => answer?.statusCode !== 429)).toHaveLength(4);
  });
});
