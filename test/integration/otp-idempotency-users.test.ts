/**
 * An OTP send's Idempotency-Key is its user's as well as its workspace's (issue 24, item 9): a
 * code is verified by the user whose key asked for it, so another user's key with the same key
 * and body gets a request of its own, which it can verify, while each user still gets their own
 * replay. SMS sends keep one key per workspace. Migration 0027 gives each OTP key saved before it
 * to the user of its request.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keyCreate } from '../../cli/admin/keys.js';
import { userCreate } from '../../cli/admin/users.js';
import { addCredits } from '../../db/credits.js';
import { otpWorkflowId } from '../../workflows/definitions.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const OTP = 'POST /api/v1/otp/send';
const run = randomBytes(4).toString('hex');

let stack: Stack;
let tenant: Tenant;
/** A key of a second user of the tenant's workspace, with the same abilities. */
let colleague: { userId: number; token: string };

const issued = new Set<string>();
/** Fresh Australian mobiles under +61487, a prefix no other test draws from. */
function mobile(): string {
  for (;;) {
    const number = `+61487${String(randomInt(1_000_000)).padStart(6, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    return number;
  }
}

function post(url: string, token: string, payload: object, key: string) {
  return stack.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
    payload,
  });
}

const verify = (token: string, payload: object) =>
  stack.app.inject({
    method: 'POST',
    url: '/api/v1/otp/verify',
    headers: { authorization: `Bearer ${token}` },
    payload,
  });

/** The codes the simulator's "phone" received, newest first. */
async function codesSentTo(to: string): Promise<string[]> {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  const { messages } = (await response.json()) as { messages: { body: string }[] };
  return messages.map((message) => /(\d{6,8})/.exec(message.body)?.[1] ?? message.body);
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
  const email = `colleague@${tenant.slug}.test`;
  const user = await userCreate(stack.admin, {
    workspace: tenant.slug,
    email,
    password: 'correct horse 1',
  });
  const key = await keyCreate(stack.admin, {
    workspace: tenant.slug,
    user: email,
    abilities: 'messages:send,messages:read,otp:send,otp:verify',
  });
  colleague = {
    userId: (user.json as { id: number }).id,
    token: (key.json as { token: string }).token,
  };
});

afterAll(async () => {
  await stack?.close();
});

describe('an OTP Idempotency-Key shared by two users of a workspace', () => {
  it('gives each user a request of their own, which each verifies, and each their own replay', async () => {
    const recipient = mobile();
    const key = `shared-otp-${run}`;
    const payload = { recipient, purpose: 'login' };

    const mine = await post('/api/v1/otp/send', tenant.token, payload, key);
    expect(mine.statusCode).toBe(202);
    const theirs = await post('/api/v1/otp/send', colleague.token, payload, key);
    expect(theirs.statusCode).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    const myRequest = mine.json().data.request_id as string;
    const theirRequest = theirs.json().data.request_id as string;
    expect(theirRequest).not.toBe(myRequest);
    expect(theirs.json().data.status).toBe('accepted');

    // Each request ran under a name of its own: the second was not folded into the first's run.
    const [first, second] = await stack.sql<{ userId: number; workflowId: string }[]>`
      select user_id, workflow_id from otp_requests
      where id in (${myRequest}, ${theirRequest}) order by created_at`;
    expect([first, second]).toEqual([
      { userId: tenant.userId, workflowId: otpWorkflowId(tenant.workspaceId, null, myRequest) },
      {
        userId: colleague.userId,
        workflowId: otpWorkflowId(tenant.workspaceId, null, theirRequest),
      },
    ]);

    // Sent one after the other: the newest code is the colleague's.
    await expect.poll(async () => (await codesSentTo(recipient)).length).toBe(2);
    const [theirCode, myCode] = (await codesSentTo(recipient)) as [string, string];
    const verified = { message: 'The code is verified.' };
    expect(
      (await verify(tenant.token, { recipient, code: myCode, request_id: myRequest })).json(),
    ).toEqual(verified);
    expect(
      (
        await verify(colleague.token, { recipient, code: theirCode, request_id: theirRequest })
      ).json(),
    ).toEqual(verified);

    for (const [token, first] of [
      [tenant.token, mine],
      [colleague.token, theirs],
    ] as const) {
      const replay = await post('/api/v1/otp/send', token, payload, key);
      expect(replay.statusCode).toBe(202);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first.body);
    }
    expect(await codesSentTo(recipient)).toHaveLength(2);
  });

  it('still tells a user who changed the body that the key is taken, by their own request', async () => {
    const key = `shared-otp-mismatch-${run}`;
    const recipient = mobile();
    const sent = await post('/api/v1/otp/send', tenant.token, { recipient, purpose: 'login' }, key);
    expect(sent.statusCode).toBe(202);
    // The colleague's different body is a first request of theirs, not a mismatch.
    const theirs = await post(
      '/api/v1/otp/send',
      colleague.token,
      { recipient, purpose: 'pay' },
      key,
    );
    expect(theirs.statusCode).toBe(202);
    const changed = await post(
      '/api/v1/otp/send',
      tenant.token,
      { recipient, purpose: 'pay' },
      key,
    );
    expect(changed.statusCode).toBe(422);
    expect(changed.json()).toEqual({
      message: 'This Idempotency-Key was already used with a different request body.',
      errors: {
        'Idempotency-Key': ['This Idempotency-Key was already used with a different request body.'],
      },
    });
  });
});

describe('an SMS Idempotency-Key shared by two users of a workspace', () => {
  it("is the workspace's: the second user gets the first send replayed, one campaign", async () => {
    const key = `shared-sms-${run}`;
    const body = { recipients: [mobile()], message: 'One campaign for the workspace' };
    const mine = await post('/api/v1/messages', tenant.token, body, key);
    expect(mine.statusCode).toBe(202);
    const theirs = await post('/api/v1/messages', colleague.token, body, key);
    expect(theirs.statusCode).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBe('true');
    expect(theirs.body).toBe(mine.body);
    const [count] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from campaigns where workspace_id = ${tenant.workspaceId}
        and body = ${body.message}`;
    expect(count?.count).toBe(1);
  });
});

describe('migration 0027', () => {
  it("gives each OTP key saved before it to its request's user, so it replays for them only", async () => {
    const recipient = mobile();
    const otpKey = `migrated-otp-${run}`;
    const smsKey = `migrated-sms-${run}`;
    const otp = await post(
      '/api/v1/otp/send',
      colleague.token,
      { recipient, purpose: 'login' },
      otpKey,
    );
    expect(otp.statusCode).toBe(202);
    const sms = await post(
      '/api/v1/messages',
      colleague.token,
      {
        recipients: [mobile()],
        message: 'Migrated',
      },
      smsKey,
    );
    expect(sms.statusCode).toBe(202);
    const migration = await readFile(
      new URL('../../db/migrations/0027_idempotency_key_users.sql', import.meta.url),
      'utf8',
    );
    const rolledBack = new Error('rolled back');
    // The table as it was before 0027 (its rows keep only their workspace scope), migrated again,
    // then all of it undone.
    await expect(
      stack.sql.begin(async (tx) => {
        // Keys two users share could not exist before: only one of each may stay.
        await tx`
          delete from idempotency_keys k where user_id <> 0 and exists (
            select 1 from idempotency_keys o
            where o.workspace_id = k.workspace_id and o.endpoint = k.endpoint and o.key = k.key
              and o.user_id < k.user_id)`;
        await tx.unsafe(`
          alter table idempotency_keys drop constraint idempotency_keys_pkey;
          alter table idempotency_keys drop column user_id;
          alter table idempotency_keys add primary key (workspace_id, endpoint, key);`);
        await tx.unsafe(migration);
        const rows = await tx<{ endpoint: string; key: string; userId: number }[]>`
          select endpoint, key, user_id from idempotency_keys
          where workspace_id = ${tenant.workspaceId} and key in (${otpKey}, ${smsKey})
          order by endpoint`;
        expect(rows).toEqual([
          { endpoint: 'POST /api/v1/messages', key: smsKey, userId: 0 },
          { endpoint: OTP, key: otpKey, userId: colleague.userId },
        ]);
        const [primaryKey] = await tx<{ definition: string }[]>`
          select pg_get_constraintdef(oid) as definition from pg_constraint
          where conname = 'idempotency_keys_pkey'`;
        expect(primaryKey?.definition).toBe('PRIMARY KEY (workspace_id, endpoint, key, user_id)');
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);

    // As migrated: the OTP key replays for its user, and is a new request for another.
    const replay = await post(
      '/api/v1/otp/send',
      colleague.token,
      { recipient, purpose: 'login' },
      otpKey,
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(otp.body);
    const another = await post(
      '/api/v1/otp/send',
      tenant.token,
      { recipient, purpose: 'login' },
      otpKey,
    );
    expect(another.headers['idempotent-replayed']).toBeUndefined();
    expect(another.json().data.request_id).not.toBe(otp.json().data.request_id);
  });
});
