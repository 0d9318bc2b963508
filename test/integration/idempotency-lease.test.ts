/**
 * The Idempotency-Key lease follows the request holding it (docs/api.md, "Idempotency-Key lease"): it
 * is 5 s long and renewed while the request works, a key whose holder died is taken over once
 * its lease has run out, the 409 says how long that is, and a holder that lost its key to another
 * writes nothing under it. A campaign is saved and tied to its key in one transaction.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { idempotently, requestHash } from '../../commands/requests/idempotency.js';
import { insertCampaign } from '../../db/campaigns.js';
import type { IdempotencyScope } from '../../db/idempotency.js';
import { HeraldError } from '../../domain/errors.js';
import { inbox, numbers, queuedResponse, waitForCompletion } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const ENDPOINT = 'POST /api/v1/messages';
const IN_PROGRESS = {
  message:
    'A request with this Idempotency-Key is still being processed. Retry with the same key shortly.',
};

let stack: Stack;
let tenant: Tenant;
const run = randomBytes(4).toString('hex');

function sendWithKey(body: object, key: string) {
  return stack.app.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: `Bearer ${tenant.token}`, 'idempotency-key': key },
    payload: body,
  });
}

async function campaignsOf(workspaceId: number) {
  return stack.sql<{ id: number; status: string; workflowId: string | null }[]>`
    select id, status, workflow_id from campaigns where workspace_id = ${workspaceId} order by id`;
}

async function keyRecord(scope: IdempotencyScope) {
  const [row] = await stack.sql<
    {
      status: string;
      resourceId: string | null;
      responseStatus: number | null;
      responseBody: string | null;
    }[]
  >`
    select status, resource_id, response_status, response_body from idempotency_keys
    where workspace_id = ${scope.workspaceId} and endpoint = ${scope.endpoint} and key = ${scope.key}`;
  return row;
}

/** The api's own dependencies, for calling `idempotently` as a second api process would. */
const deps = () => ({ sql: stack.sql, env: stack.admin.env });

/** A campaign saved by `work` below; its body names the holder that saved it. */
function campaignBy(holder: string) {
  return {
    workspaceId: tenant.workspaceId,
    apiKeyId: null,
    reference: null,
    purpose: 'transactional' as const,
    body: `saved by the ${holder}`,
    senderId: null,
    routingType: 'direct' as const,
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients: numbers(1),
  };
}

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
});

afterAll(async () => {
  await stack?.close();
});

describe('a key whose holder died', () => {
  it('is taken over once its 5 s lease runs out, each 409 saying how long is left', {
    timeout: 60_000,
  }, async () => {
    const key = `dead-holder-${run}`;
    const recipients = numbers(2);
    const payload = { recipients, message: 'After the crash' };
    // What an api leaves that died right after renewing its lease: processing, 5 s to go.
    const seededFrom = Date.now();
    await stack.sql`
      insert into idempotency_keys
        (workspace_id, endpoint, key, request_hash, status, locked_until, expires_at, claim_token)
      values (${tenant.workspaceId}, ${ENDPOINT}, ${key}, ${requestHash(payload)}, 'processing',
              now() + interval '5 seconds', now() + interval '1 day', gen_random_uuid())`;
    const seededBy = Date.now();

    // The lease left when the api answered, rounded up, at least 1, between the bounds that the
    // times of the seed and of the request allow.
    const left = (elapsedMs: number) => Math.max(1, Math.ceil((5000 - elapsedMs) / 1000));
    const refusals: { retryAfter: number; atMost: number; atLeast: number }[] = [];
    for (;;) {
      const sentAt = Date.now();
      const response = await sendWithKey(payload, key);
      const answeredAt = Date.now();
      if (response.statusCode !== 409) {
        // Not before the lease ran out, and soon after (a 250 ms poll, then the send itself).
        expect(answeredAt - seededFrom).toBeGreaterThanOrEqual(5000);
        expect(answeredAt - seededBy).toBeLessThan(7000);
        expect(response.statusCode).toBe(202);
        expect(response.json()).toEqual(queuedResponse({ total: 2 }));
        break;
      }
      expect(response.json()).toEqual(IN_PROGRESS);
      refusals.push({
        retryAfter: Number(response.headers['retry-after']),
        atMost: left(sentAt - seededBy),
        atLeast: left(answeredAt - seededFrom),
      });
      expect(answeredAt - seededFrom).toBeLessThan(7000);
      await sleep(250);
    }
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    for (const { retryAfter, atMost, atLeast } of refusals) {
      expect(retryAfter).toBeLessThanOrEqual(atMost);
      expect(retryAfter).toBeGreaterThanOrEqual(atLeast);
    }
    // It counts down from the whole lease.
    expect(refusals.map((refusal) => refusal.retryAfter)).toEqual(
      [...refusals.map((refusal) => refusal.retryAfter)].sort((a, b) => b - a),
    );

    const [campaign] = await campaignsOf(tenant.workspaceId).then((rows) =>
      rows.filter((row) => row.workflowId === `campaign/${tenant.workspaceId}/${key}`),
    );
    expect(await waitForCompletion(stack, tenant.token, campaign?.id ?? 0)).toMatchObject({
      sent_count: 2,
      failed_count: 0,
    });
    for (const to of recipients) expect(await inbox(simulatorUrl, to)).toHaveLength(1);
  });
});

describe('a live holder', () => {
  it('keeps its key past the 5 s lease while it works, then stores its answer', {
    timeout: 30_000,
  }, async () => {
    const scope = { workspaceId: tenant.workspaceId, endpoint: 'test: long work', key: run };
    const body = { work: 'long' };
    const working = idempotently(deps(), scope, body, async () => {
      await sleep(8000);
      return { status: 202, body: '{"done":true}', final: true };
    });
    await sleep(6500);
    const competitor = await idempotently(deps(), scope, body, async () => {
      throw new Error('the competitor must not run the work');
    }).catch((error: unknown) => error);
    expect(competitor).toBeInstanceOf(HeraldError);
    expect(competitor).toMatchObject({ code: 'idempotency_in_progress', status: 409 });
    // Renewed every 1.5 s: about 3.5 to 5 s left whenever it is asked.
    expect(Number((competitor as HeraldError).headers['retry-after'])).toBeGreaterThanOrEqual(3);
    expect(Number((competitor as HeraldError).headers['retry-after'])).toBeLessThanOrEqual(5);

    expect(await working).toEqual({ status: 202, body: '{"done":true}', replayed: false });
    expect(
      await idempotently(deps(), scope, body, async () => {
        throw new Error('a replay must not run the work');
      }),
    ).toEqual({ status: 202, body: '{"done":true}', replayed: true });
  });
});

describe('a holder that lost its key to another', () => {
  /** A holder whose renewals stall (a paused process, a stuck connection): its 1 s lease ends. */
  const STALLING = { seconds: 1, renewEveryMs: 3_600_000 };

  /** A promise and the function that settles it. */
  function gate() {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { open, opened };
  }

  /** What a request gets while another holds the key: 409 and the lease left. */
  async function refusal(answer: Promise<unknown>) {
    const error = await answer.then(
      (value) => value,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(HeraldError);
    const { code, status, headers } = error as HeraldError;
    return { code, status, retryAfter: Number(headers['retry-after']) };
  }

  it('cannot save its campaign under the key while the successor works', async () => {
    const scope = { workspaceId: tenant.workspaceId, endpoint: 'test: stalled', key: `a-${run}` };
    const body = { work: 'stalls before saving' };
    const [stalledResumes, successorResumes] = [gate(), gate()];
    const stalled = idempotently(
      deps(),
      scope,
      body,
      async ({ attach }) => {
        await stalledResumes.opened;
        await insertCampaign(stack.sql, campaignBy('stalled holder'), (tx, c) =>
          attach(String(c.id), tx),
        );
        return { status: 202, body: '{"holder":"stalled"}', final: true };
      },
      STALLING,
    );
    await sleep(1500);
    const successor = idempotently(deps(), scope, body, async ({ resourceId, attach }) => {
      expect(resourceId).toBeNull();
      await successorResumes.opened;
      const { id } = await insertCampaign(stack.sql, campaignBy('successor'), (tx, c) =>
        attach(String(c.id), tx),
      );
      return { status: 202, body: JSON.stringify({ holder: 'successor', id }), final: true };
    });
    await sleep(200);
    stalledResumes.open();
    // Its tie to the key is refused, which takes its campaign back; it answers as any request
    // that finds the key held: 409 with the successor's lease left.
    expect(await refusal(stalled)).toEqual({
      code: 'idempotency_in_progress',
      status: 409,
      retryAfter: 5,
    });
    successorResumes.open();
    const answer = await successor;
    expect(answer.replayed).toBe(false);

    const saved = await stack.sql<{ body: string }[]>`
      select body from campaigns where workspace_id = ${tenant.workspaceId}
        and body in ('saved by the stalled holder', 'saved by the successor')`;
    expect(saved.map((row) => row.body)).toEqual(['saved by the successor']);
    expect(await keyRecord(scope)).toEqual({
      status: 'completed',
      resourceId: String(JSON.parse(answer.body).id),
      responseStatus: 202,
      responseBody: answer.body,
    });
  });

  it("does not store its answer over the successor's", async () => {
    const scope = { workspaceId: tenant.workspaceId, endpoint: 'test: stalled', key: `b-${run}` };
    const body = { work: 'stalls before answering' };
    const [stalledResumes, successorResumes] = [gate(), gate()];
    const stalled = idempotently(
      deps(),
      scope,
      body,
      async ({ attach }) => {
        await attach('resource-1');
        await stalledResumes.opened;
        return { status: 202, body: '{"holder":"stalled"}', final: true };
      },
      STALLING,
    );
    await sleep(1500);
    const successor = idempotently(deps(), scope, body, async ({ resourceId }) => {
      // It continues what the stalled holder created, as a retry does.
      expect(resourceId).toBe('resource-1');
      await successorResumes.opened;
      return { status: 202, body: '{"holder":"successor"}', final: true };
    });
    await sleep(200);
    stalledResumes.open();
    expect(await refusal(stalled)).toEqual({
      code: 'idempotency_in_progress',
      status: 409,
      retryAfter: 5,
    });
    successorResumes.open();
    expect(await successor).toEqual({
      status: 202,
      body: '{"holder":"successor"}',
      replayed: false,
    });
    expect(await keyRecord(scope)).toEqual({
      status: 'completed',
      resourceId: 'resource-1',
      responseStatus: 202,
      responseBody: '{"holder":"successor"}',
    });
  });

  it("answers the successor's stored answer once the successor has finished", async () => {
    const scope = { workspaceId: tenant.workspaceId, endpoint: 'test: stalled', key: `c-${run}` };
    const body = { work: 'stalls past the successor' };
    const stalledResumes = gate();
    const stalled = idempotently(
      deps(),
      scope,
      body,
      async () => {
        await stalledResumes.opened;
        return { status: 202, body: '{"holder":"stalled"}', final: true };
      },
      STALLING,
    );
    await sleep(1500);
    const successor = await idempotently(deps(), scope, body, async () => ({
      status: 201,
      body: '{"holder":"successor"}',
      final: true,
    }));
    stalledResumes.open();
    expect(await stalled).toEqual({ ...successor, replayed: true });
    expect((await keyRecord(scope))?.responseBody).toBe('{"holder":"successor"}');
  });
});

describe('saving a campaign and tying it to its key', () => {
  it('is one transaction: a failure after the insert leaves no campaign, and the retry sends once', {
    timeout: 60_000,
  }, async () => {
    const own = await createTenant(stack.admin);
    const key = `fails-after-insert-${run}`;
    const recipients = numbers(2);
    const payload = { recipients, message: 'Saved once' };
    // A fault between saving the campaign and tying it to the key: Postgres refuses the tie.
    const fault = `test_refuse_attach_${run}`;
    await stack.sql.unsafe(`
      create function ${fault}() returns trigger language plpgsql as $$
      begin raise exception 'injected: the api died after saving the campaign'; end $$`);
    await stack.sql.unsafe(`
      create trigger ${fault} before update of resource_id on idempotency_keys for each row
      when (new.key = '${key}' and new.resource_id is not null) execute function ${fault}()`);
    let failed: Awaited<ReturnType<typeof sendWithKey>>;
    try {
      failed = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/messages',
        headers: { authorization: `Bearer ${own.token}`, 'idempotency-key': key },
        payload,
      });
    } finally {
      await stack.sql.unsafe(`drop trigger ${fault} on idempotency_keys`);
      await stack.sql.unsafe(`drop function ${fault}()`);
    }
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toEqual({ message: 'Server error.' });
    expect(await campaignsOf(own.workspaceId)).toEqual([]);
    const orphanMessages = await stack.sql`
      select 1 from campaign_messages where recipient = any(${recipients})`;
    expect(orphanMessages).toHaveLength(0);
    // Nothing was created, so the key was let go: the retry is a first request.
    expect(
      await keyRecord({ workspaceId: own.workspaceId, endpoint: ENDPOINT, key }),
    ).toBeUndefined();

    const retried = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { authorization: `Bearer ${own.token}`, 'idempotency-key': key },
      payload,
    });
    expect(retried.statusCode).toBe(202);
    expect(retried.json()).toEqual(queuedResponse({ total: 2 }));
    const campaigns = await campaignsOf(own.workspaceId);
    expect(campaigns.map((row) => row.workflowId)).toEqual([`campaign/${own.workspaceId}/${key}`]);
    await waitForCompletion(stack, own.token, campaigns[0]?.id ?? 0);
    for (const to of recipients) expect(await inbox(simulatorUrl, to)).toHaveLength(1);
  });
});
