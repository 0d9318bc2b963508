/**
 * webhookWorkflow on the production retry schedule (10 attempts over 3 days 3 h 35 min 5 s),
 * time-skipped on Temporal's Java test server, with the real activities against the run's real
 * Postgres and a local receiving server. Two workers: one that allows private URLs (the receiver
 * is on 127.0.0.1) and a strict one, as production runs by default.
 *
 * Events are written to the outbox already marked dispatched, so the shared worker's dispatcher
 * leaves them alone: this file starts their workflows itself, on the time-skipping server.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { webhookCreate, webhookList } from '../../cli/admin/webhooks.js';
import type { AdminContext } from '../../cli/context.js';
import { parseEnv } from '../../config/env.js';
import { insertCampaign } from '../../db/campaigns.js';
import { createSql, type Sql } from '../../db/client.js';
import {
  formatDelay,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_DELAYS_MS,
} from '../../domain/webhooks.js';
import type { HostResolver } from '../../security/ssrf.js';
import { installTemporalRuntime } from '../../server/worker.js';
import { searchAttributes, TASK_QUEUE, webhookWorkflowId } from '../../workflows/definitions.js';
import type { webhookWorkflow } from '../../workflows/webhook.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { createTenant, type Tenant } from '../support/stack.js';
import { startTimeSkippingEnvironment, type TimeSkipping } from '../support/time-skipping.js';
import {
  attemptsLog,
  type LoggedAttempt,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

const STRICT_QUEUE = 'herald-strict';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SCHEDULE_MS = WEBHOOK_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);

let timeSkipping: TimeSkipping;
let env: TestWorkflowEnvironment;
let sql: Sql;
let admin: AdminContext;
let receiver: WebhookReceiver;
let workers: Worker[] = [];
let running: Promise<unknown>;

/** DNS as the workers see it: names of this file point at the receiver's loopback address. */
const deliveryDns: HostResolver = async (hostname) => {
  if (hostname.endsWith('.herald.test')) return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

interface Endpoint {
  id: number;
  secret: string;
}

async function createEndpoint(
  tenant: Tenant,
  url: string,
  options: { allowPrivate: boolean; dns: HostResolver },
): Promise<Endpoint> {
  const context = {
    ...admin,
    env: { ...admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: options.allowPrivate },
    webhookResolver: options.dns,
  };
  return (await webhookCreate(context, { workspace: tenant.slug, url, events: 'all' }))
    .json as unknown as Endpoint;
}

/** An event in the outbox for `endpointId`, already dispatched (the test starts its workflow). */
async function outboxEvent(tenant: Tenant, endpointId: number): Promise<string> {
  const [row] = await sql<{ eventId: string }[]>`
    insert into webhook_events (workspace_id, type, data, endpoint_ids, dispatched_at)
    values (${tenant.workspaceId}, 'campaign.completed',
      ${sql.json({ campaign_id: 1, reference: 'schedule', status: 'completed' })},
      ${[endpointId]}::bigint[], now())
    returning event_id`;
  return row?.eventId as string;
}

function startDelivery(
  tenant: Tenant,
  eventId: string,
  endpointId: number,
  taskQueue = TASK_QUEUE,
) {
  return env.client.workflow.start<typeof webhookWorkflow>('webhookWorkflow', {
    workflowId: webhookWorkflowId(tenant.workspaceId, eventId, endpointId),
    taskQueue,
    args: [{ workspaceId: tenant.workspaceId, eventId, endpointId }],
    typedSearchAttributes: [
      { key: searchAttributes.workspaceId, value: String(tenant.workspaceId) },
      { key: searchAttributes.kind, value: 'webhook' },
      { key: searchAttributes.status, value: 'pending' },
    ],
  });
}

function expectedAttempt(
  log: LoggedAttempt[],
  eventId: string,
  n: number,
  result: { status_code: number | null; error: string | null },
): LoggedAttempt {
  const actual = log[n - 1] as LoggedAttempt;
  const delay = WEBHOOK_RETRY_DELAYS_MS[n - 1];
  const succeeded = result.error === null;
  const next =
    succeeded || delay === undefined
      ? null
      : new Date(Date.parse(actual.attempted_at) + actual.duration_ms + delay).toISOString();
  return {
    event_id: eventId,
    type: 'campaign.completed',
    attempt: n,
    attempted_at: expect.stringMatching(ISO) as unknown as string,
    ...result,
    duration_ms: expect.any(Number) as unknown as number,
    succeeded,
    next_attempt_at: next,
    final: next === null,
  };
}

beforeAll(async () => {
  installTemporalRuntime();
  timeSkipping = await startTimeSkippingEnvironment();
  env = timeSkipping.env;
  sql = createSql(inject('databaseUrl'), { max: 4 });
  admin = {
    env: parseEnv({ LOG_LEVEL: 'silent' }),
    secret: inject('secret'),
    sql,
    actor: TEST_OPERATOR,
  };
  receiver = await startWebhookReceiver();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: new URL('../../workflows/index.ts', import.meta.url).pathname,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  const deps = {
    sql,
    secret: inject('secret'),
    ownProviderUrl: inject('simulatorUrl'),
    publicUrl: 'http://herald.test',
    webhookResolver: deliveryDns,
  };
  workers = await Promise.all(
    [
      { taskQueue: TASK_QUEUE, allowPrivateWebhookUrls: true },
      { taskQueue: STRICT_QUEUE, allowPrivateWebhookUrls: false },
    ].map(({ taskQueue, allowPrivateWebhookUrls }) =>
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        workflowBundle,
        activities: createActivities({ ...deps, allowPrivateWebhookUrls }),
      }),
    ),
  );
  running = Promise.all(workers.map((worker) => worker.run()));
}, 240_000);

afterAll(async () => {
  for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
  await timeSkipping?.stop();
  await receiver?.close();
  await sql?.end();
});

describe('the production retry schedule, time-skipped', { timeout: 120_000 }, () => {
  it('makes ten attempts over 3 days 3 h 35 min 5 s, then disables the endpoint', async () => {
    const tenant = await createTenant(admin);
    const path = `/always-500/${tenant.slug}`;
    receiver.plan(path, Array(WEBHOOK_MAX_ATTEMPTS).fill(500));
    const endpoint = await createEndpoint(tenant, `${receiver.url}${path}`, {
      allowPrivate: true,
      dns: deliveryDns,
    });
    const eventId = await outboxEvent(tenant, endpoint.id);
    const realStart = Date.now();
    const handle = await startDelivery(tenant, eventId, endpoint.id);
    expect(await handle.result()).toBe('failed');
    expect(Date.now() - realStart).toBeLessThan(60_000);

    const description = await handle.describe();
    expect(
      (description.closeTime?.getTime() ?? 0) - description.startTime.getTime(),
    ).toBeGreaterThanOrEqual(SCHEDULE_MS);
    expect(description.typedSearchAttributes.get(searchAttributes.status)).toBe('failed');
    expect(description.typedSearchAttributes.get(searchAttributes.kind)).toBe('webhook');

    // Ten signed POSTs of one event: one webhook-id, one body, each signature valid.
    const requests = receiver.at(path);
    expect(requests).toHaveLength(WEBHOOK_MAX_ATTEMPTS);
    for (const request of requests) {
      expect(request.headers['webhook-id']).toBe(eventId);
      expect(request.body).toBe(requests[0]?.body);
      new Webhook(endpoint.secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      });
    }

    const log = await attemptsLog(admin, endpoint.id);
    expect(log).toEqual(
      Array.from({ length: WEBHOOK_MAX_ATTEMPTS }, (_, index) =>
        expectedAttempt(log, eventId, index + 1, { status_code: 500, error: 'HTTP 500' }),
      ),
    );
    expect(log.at(-1)).toMatchObject({ next_attempt_at: null, final: true });

    const reason =
      `Disabled after 10 failed attempts to deliver ${eventId} ` +
      '(retry schedule of 3 d 3 h 35 min 5 s spent); last error: HTTP 500';
    expect(formatDelay(SCHEDULE_MS)).toBe('3 d 3 h 35 min 5 s');
    const { json } = await webhookList(admin, { workspace: tenant.slug });
    expect(json.endpoints).toEqual([
      expect.objectContaining({
        id: endpoint.id,
        enabled: false,
        disabled_at: expect.stringMatching(ISO),
        disabled_reason: reason,
      }),
    ]);

    // Disabled: a new state change records no event for it, and a delivery in flight stops.
    const { id: campaignId } = await insertCampaign(sql, {
      workspaceId: tenant.workspaceId,
      apiKeyId: null,
      reference: null,
      purpose: 'transactional',
      body: 'Hello',
      senderId: null,
      routingType: 'direct',
      providerSlug: 'own',
      failoverRouteSlug: null,
      recipients: ['+61400000001'],
    });
    await sql`update campaign_messages set status = 'failed', error = 'test'
      where campaign_id = ${campaignId}`;
    await sql`update campaigns set status = 'completed', completed_at = now()
      where id = ${campaignId}`;
    const [{ count } = { count: -1 }] = await sql<{ count: number }[]>`
      select count(*)::int as count from webhook_events where workspace_id = ${tenant.workspaceId}`;
    expect(count).toBe(1);
    const stray = await outboxEvent(tenant, endpoint.id);
    expect(await (await startDelivery(tenant, stray, endpoint.id)).result()).toBe('skipped');
    expect(receiver.at(path)).toHaveLength(WEBHOOK_MAX_ATTEMPTS);
  });

  it('retries after a 500, a redirect, a timeout and a 503, then succeeds on the fifth attempt', async () => {
    const tenant = await createTenant(admin);
    const path = `/recovering/${tenant.slug}`;
    receiver.plan(path, [500, 302, 'hang', 503, 200]);
    const endpoint = await createEndpoint(tenant, `${receiver.url}${path}`, {
      allowPrivate: true,
      dns: deliveryDns,
    });
    const eventId = await outboxEvent(tenant, endpoint.id);
    const handle = await startDelivery(tenant, eventId, endpoint.id);
    expect(await handle.result()).toBe('delivered');
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(searchAttributes.status)).toBe('delivered');
    // Waited 5 s + 5 min + 30 min + 2 h between the five attempts.
    expect(
      (description.closeTime?.getTime() ?? 0) - description.startTime.getTime(),
    ).toBeGreaterThanOrEqual(5_000 + 5 * 60_000 + 30 * 60_000 + 2 * 3_600_000);

    expect(receiver.at(path)).toHaveLength(5);
    expect(receiver.at(`${path}/redirected`)).toHaveLength(0);
    const log = await attemptsLog(admin, endpoint.id);
    expect(log).toEqual([
      expectedAttempt(log, eventId, 1, { status_code: 500, error: 'HTTP 500' }),
      expectedAttempt(log, eventId, 2, {
        status_code: 302,
        error: 'HTTP 302 (redirects are not followed)',
      }),
      expectedAttempt(log, eventId, 3, { status_code: null, error: 'timed out after 15 s' }),
      expectedAttempt(log, eventId, 4, { status_code: 503, error: 'HTTP 503' }),
      expectedAttempt(log, eventId, 5, { status_code: 200, error: null }),
    ]);
    expect(log[2]?.duration_ms).toBeGreaterThanOrEqual(15_000);
    expect(log[2]?.duration_ms).toBeLessThan(16_000);
    expect((await webhookList(admin, { workspace: tenant.slug })).json.endpoints).toEqual([
      expect.objectContaining({ id: endpoint.id, enabled: true, disabled_reason: null }),
    ]);
  });
});

describe('SSRF at delivery time', { timeout: 120_000 }, () => {
  it('refuses every attempt once the host resolves to a private address, and sends nothing', async () => {
    const tenant = await createTenant(admin);
    const path = `/rebind/${tenant.slug}`;
    const url = `http://rebind.herald.test:${receiver.port}${path}`;
    // Public when the endpoint was created …
    const endpoint = await createEndpoint(tenant, url, {
      allowPrivate: false,
      dns: async () => [{ address: '93.184.215.14', family: 4 }],
    });
    const eventId = await outboxEvent(tenant, endpoint.id);
    // … loopback by the time of delivery, on a worker that does not allow private addresses.
    const handle = await startDelivery(tenant, eventId, endpoint.id, STRICT_QUEUE);
    expect(await handle.result()).toBe('failed');

    expect(receiver.at(path)).toHaveLength(0);
    const refused =
      'Refused: rebind.herald.test does not resolve to an allowed address ' +
      '(WEBHOOK_ALLOW_PRIVATE_URLS is false)';
    const log = await attemptsLog(admin, endpoint.id);
    expect(log).toEqual(
      Array.from({ length: WEBHOOK_MAX_ATTEMPTS }, (_, index) =>
        expectedAttempt(log, eventId, index + 1, { status_code: null, error: refused }),
      ),
    );
    expect((await webhookList(admin, { workspace: tenant.slug })).json.endpoints).toEqual([
      expect.objectContaining({
        enabled: false,
        disabled_reason:
          `Disabled after 10 failed attempts to deliver ${eventId} ` +
          `(retry schedule of 3 d 3 h 35 min 5 s spent); last error: ${refused}`,
      }),
    ]);
  });

  it('connects to the address it checked, never resolving the name again', async () => {
    const tenant = await createTenant(admin);
    const path = `/pinned/${tenant.slug}`;
    // Only the worker's resolver knows this name: system DNS would fail to find it.
    const endpoint = await createEndpoint(
      tenant,
      `http://pinned.herald.test:${receiver.port}${path}`,
      {
        allowPrivate: true,
        dns: deliveryDns,
      },
    );
    const eventId = await outboxEvent(tenant, endpoint.id);
    expect(await (await startDelivery(tenant, eventId, endpoint.id)).result()).toBe('delivered');
    const [request] = receiver.at(path);
    expect(request?.headers.host).toBe(`pinned.herald.test:${receiver.port}`);
    expect(request?.headers['webhook-id']).toBe(eventId);
  });
});
