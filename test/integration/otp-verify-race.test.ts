/**
 * The five-failure limit (docs/spec.md §4.4) under concurrency: wrong guesses and the right code for one
 * subject (user, recipient, purpose), queued behind one another in Postgres and spread over two
 * api instances with their own pools, as two api processes would be.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { addCredits } from '../../db/credits.js';
import { buildApp } from '../../server/app.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const FAILED = { message: 'The code is invalid or has expired.' };
const WRONG_GUESSES = 30;

let stack: Stack;
let tenant: Tenant;
const replicas: { app: ReturnType<typeof buildApp>; sql: Sql }[] = [];
let numberSeed = Math.floor(Math.random() * 900_000);
/** Under +61478, which no other test file uses. */
const mobile = () => `+61478${String(100_000 + numberSeed++).slice(-6)}`;

function post(replica: number, url: string, payload: object) {
  return (replicas[replica] as (typeof replicas)[number]).app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${tenant.token}` },
    payload,
  });
}

async function sendCode(recipient: string): Promise<{ requestId: string; code: string }> {
  const response = await post(0, '/api/v1/otp/send', { recipient, purpose: 'login' });
  // The whole answer, so a refusal shows why.
  expect({ status: response.statusCode, body: response.json() }).toMatchObject({
    status: 202,
    body: { data: { status: 'accepted' } },
  });
  const inbox = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(recipient)}`);
  const { messages } = (await inbox.json()) as { messages: { body: string }[] };
  const code = /(\d{6})/.exec(messages[0]?.body ?? '')?.[1] as string;
  return { requestId: response.json().data.request_id, code };
}

/** Verifications of the test's own statements waiting for a lock, as Postgres sees them. */
async function waitingVerifications(): Promise<number> {
  const [row] = await stack.sql<{ waiting: number }[]>`
    select count(*)::int as waiting from pg_stat_activity
    where wait_event_type = 'Lock'
      and query like '%herald_verify_otp_outcome(%'`;
  return row?.waiting ?? 0;
}

async function until(count: number) {
  const deadline = Date.now() + 2_000;
  while ((await waitingVerifications()) < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} verifications queued`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
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
  for (const { app, sql } of replicas) {
    await app.close();
    await sql.end();
  }
  await stack.close();
});

describe('the five-failure limit under concurrency', () => {
  it('never verifies the right code queued behind 30 wrong guesses, across two requests of the subject and two api instances', async () => {
    const recipient = mobile();
    const guessed = await sendCode(recipient);
    const presented = await sendCode(recipient); // the same subject: user, recipient, purpose
    const wrong = presented.code === '000000' ? '111111' : '000000';

    // A transaction holding both requests makes every verification queue in Postgres, so that
    // each one's statement starts before the failures ahead of it commit.
    let release = () => {};
    const held = stack.sql.begin(async (tx) => {
      await tx`select id from otp_requests where id in ${tx([guessed.requestId, presented.requestId])} for update`;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const guesses = Array.from({ length: WRONG_GUESSES }, (_, index) =>
      post(index % 2, '/api/v1/otp/verify', {
        recipient,
        code: wrong,
        request_id: guessed.requestId,
      }),
    );
    await until(WRONG_GUESSES);
    const right = post(1, '/api/v1/otp/verify', {
      recipient,
      code: presented.code,
      request_id: presented.requestId,
    });
    await until(WRONG_GUESSES + 1);
    release();
    await held;

    const answers = await Promise.all(guesses);
    expect(answers.map((answer) => [answer.statusCode, answer.json()])).toEqual(
      Array.from({ length: WRONG_GUESSES }, () => [422, FAILED]),
    );
    const answer = await right;
    expect([answer.statusCode, answer.json()]).toEqual([422, FAILED]);
    const [verified] = await stack.sql<{ verifiedAt: Date | null }[]>`
      select verified_at from otp_requests where id = ${presented.requestId}`;
    expect(verified?.verifiedAt).toBeNull();
  });
});
