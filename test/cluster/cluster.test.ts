import { readFile } from 'node:fs/promises';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../../cli/cluster/temporal-build.js';
import { MAINTENANCE_SCHEDULE_ID } from '../../workflows/definitions.js';
import { call, createTenant, type Tenant } from '../chaos/support/api.js';
import { auditCampaigns, readInbox, setBehaviour } from '../chaos/support/audit.js';
import {
  apiCounters,
  type SentCampaign,
  sendCampaign,
  untilAllCompleted,
  untilArrived,
} from '../chaos/support/campaign.js';
import { waitUntil } from '../chaos/support/timing.js';
import { connectWithForms } from '../support/oauth-forms.js';
import { repoRoot } from '../support/processes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { ClusterUnderTest } from './support.js';

/**
 * Herald on the production shape (`npm run cluster`): a Temporal cluster of four server
 * processes on Postgres with four history shards, two apis, two workers. Each feature's
 * end-to-end path, then two faults, counted at the simulator's inbox.
 */

let under: ClusterUnderTest;
let receiver: WebhookReceiver;

beforeAll(async () => {
  under = await ClusterUnderTest.start();
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await under?.close();
});

/** Messages at the simulator for one phone, as GET /v1/inbox?to= lists them. */
async function inboxFor(to: string): Promise<{ body: string }[]> {
  const response = await fetch(`${under.simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  return ((await response.json()) as { messages: { body: string }[] }).messages;
}

async function deliveredCount(campaignId: number): Promise<number> {
  return under.withSql(async (sql) => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from campaign_messages
      where campaign_id = ${campaignId} and delivery_status = 'delivered'`;
    return row?.n ?? 0;
  });
}

/** Every recipient of the campaign received exactly one copy; the counters add up. */
async function expectExactlyOnce(tenant: Tenant, campaign: SentCampaign) {
  const completed = await untilAllCompleted(under.asStack(), [campaign.id], 180_000);
  expect(completed).toBe(true);
  const inbox = await readInbox(under.simulatorUrl);
  const audit = await auditCampaigns(under.asStack(), tenant.workspaceId, inbox);
  expect({ lost: audit.lost, duplicated: audit.duplicated, queued: audit.queued }).toEqual({
    lost: 0,
    duplicated: 0,
    queued: 0,
  });
  const copies = inbox.filter((message) => message.body === campaign.body);
  expect(copies.length).toBe(campaign.recipients.length);
  expect(new Set(copies.map((message) => message.to)).size).toBe(campaign.recipients.length);
  expect(await apiCounters(under.asStack(), tenant, campaign)).toEqual({
    status: 'completed',
    total: campaign.recipients.length,
    sent: campaign.recipients.length,
    failed: 0,
    queued: 0,
  });
}

describe('the cluster', () => {
  it('runs the Temporal versions docker-compose.yml names', async () => {
    const compose = await readFile(`${repoRoot}docker-compose.yml`, 'utf8');
    const images = [...compose.matchAll(/image: (temporalio\/[\w-]+):(\S+)/g)].map(
      ([, image, tag]) => `${image}:${tag}`,
    );
    expect(images.sort()).toEqual(
      [
        `temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`,
        `temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`,
        `temporalio/server:${TEMPORAL_SERVER_VERSION}`,
        `temporalio/ui:${TEMPORAL_UI_VERSION}`,
      ].sort(),
    );
  });

  it("serves each Temporal service's Prometheus metrics", async () => {
    const { metricsUrls } = under.cluster.temporal;
    for (const [service, url] of Object.entries(metricsUrls)) {
      const response = await fetch(url);
      expect([service, response.status]).toEqual([service, 200]);
      expect(await response.text()).toMatch(new RegExp(`service_name="${service}"`));
    }
  });

  it('answers /health 200 on both apis, with four Temporal services running', async () => {
    for (const url of under.apiUrls) {
      const health = await call(url, 'GET', '/health');
      expect(health.status).toBe(200);
    }
    expect([...under.cluster.temporal.services.values()].map((child) => child.running)).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('sends a campaign through the second api, with delivery receipts', async () => {
    const tenant = await createTenant(under.asStack(), { name: 'Cluster campaign' });
    const campaign = await sendCampaign(under.asStack(), tenant, {
      label: 'receipts',
      prefix: '+61421',
      count: 25,
    });
    await expectExactlyOnce(tenant, campaign);
    const first = campaign.recipients[0] as string;
    expect((await inboxFor(first)).filter((m) => m.body === campaign.body)).toHaveLength(1);
    // The simulator posts a receipt per message to the apis; each marks its message delivered.
    await waitUntil(
      '25 delivery receipts',
      async () => ((await deliveredCount(campaign.id)) === 25 ? true : undefined),
      60_000,
    );
  });

  it('has the maintenance schedule, and finds a campaign by its search attributes', async () => {
    const tenant = await createTenant(under.asStack(), { name: 'Cluster visibility' });
    const campaign = await sendCampaign(under.asStack(), tenant, {
      label: 'visibility',
      prefix: '+61426',
      count: 1,
    });
    const connection = await Connection.connect({ address: under.cluster.temporal.address });
    try {
      const schedule = await connection.workflowService.describeSchedule({
        namespace: 'default',
        scheduleId: MAINTENANCE_SCHEDULE_ID,
      });
      expect(schedule.schedule?.action?.startWorkflow?.workflowType?.name).toBeTruthy();
      // Postgres visibility: the query runs on the columns the attributes were registered to.
      const query = `HeraldWorkspaceId="${tenant.workspaceId}" AND HeraldKind="campaign" AND HeraldCampaignId=${campaign.id}`;
      const found = await waitUntil(
        'the campaign in visibility',
        async () => {
          const listed = await connection.workflowService.listWorkflowExecutions({
            namespace: 'default',
            query,
          });
          return listed.executions.length > 0 ? listed.executions : undefined;
        },
        30_000,
      );
      expect(found).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });

  it('sends an OTP with Update-with-Start and verifies the code from the inbox', async () => {
    const tenant = await createTenant(under.asStack(), { name: 'Cluster OTP', credits: 10 });
    const recipient = '+61431000001';
    const sent = await call(under.apiUrls[1] as string, 'POST', '/api/v1/otp/send', {
      token: tenant.token,
      key: 'cluster-otp-1',
      body: { recipient, purpose: 'login', code_length: 8 },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.data.status).toBe('accepted');
    const [message] = await waitUntil(
      'the code at the inbox',
      async () => {
        const messages = await inboxFor(recipient);
        return messages.length > 0 ? messages : undefined;
      },
      30_000,
    );
    const code = /\d{8}/.exec(message?.body ?? '')?.[0];
    expect(code).toMatch(/^\d{8}$/);
    const verified = await call(under.apiUrls[0] as string, 'POST', '/api/v1/otp/verify', {
      token: tenant.token,
      body: { recipient, code, request_id: sent.body.data.request_id },
    });
    expect(verified.status).toBe(200);
    expect(await inboxFor(recipient)).toHaveLength(1);
  });

  it('delivers a signed webhook when a campaign completes', async () => {
    const tenant = await createTenant(under.asStack(), { name: 'Cluster webhook' });
    const endpoint = await under.admin([
      'webhook',
      'create',
      '--workspace',
      tenant.slug,
      '--url',
      `${receiver.url}/cluster-hook`,
      '--events',
      'campaign.completed',
    ]);
    expect(endpoint.events).toEqual(['campaign.completed']);
    const campaign = await sendCampaign(under.asStack(), tenant, {
      label: 'webhook',
      prefix: '+61422',
      count: 3,
    });
    const [delivery] = await receiver.waitFor('/cluster-hook', 1, 60_000);
    const payload = JSON.parse(delivery?.body ?? '{}');
    expect(payload.type).toBe('campaign.completed');
    expect(JSON.stringify(payload.data)).toContain(String(campaign.id));
    expect(delivery?.headers['webhook-signature']).toMatch(/^v1,/);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(receiver.at('/cluster-hook')).toHaveLength(1);
  });

  it('answers an MCP tool call with the workspace sends', async () => {
    const tenant = await createTenant(under.asStack(), { name: 'Cluster MCP' });
    const user = { email: `mcp-${tenant.slug}@herald.test`, password: 'cluster pass 1' };
    await under.admin([
      'user',
      'create',
      '--workspace',
      tenant.slug,
      '--email',
      user.email,
      '--password',
      user.password,
      '--role',
      'owner',
    ]);
    const campaign = await sendCampaign(under.asStack(), tenant, {
      label: 'mcp',
      prefix: '+61423',
      count: 2,
    });
    await untilAllCompleted(under.asStack(), [campaign.id], 60_000);
    const { accessToken } = await connectWithForms(under.apiUrls[0] as string, user);
    const response = await fetch(`${under.apiUrls[1]}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        // An API send is an unnamed batch: listed with the Quick Sends, not the campaigns.
        params: { name: 'list_recent_quick_sends', arguments: { limit: 20 } },
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { isError?: boolean; content: unknown } };
    expect(body.result.isError ?? false).toBe(false);
    expect(JSON.stringify(body.result.content)).toContain(String(campaign.id));
  });
});

describe('workspace fairness on the cluster', () => {
  it("serves another workspace's one message ahead of a backlog", async () => {
    // Each chunk of 100 takes about a second (two batches of 50 at 500 ms) on the workers'
    // 2 × 4 campaign slots: 30 campaigns of 200 are about 8 s of backlog.
    await setBehaviour(under.simulatorUrl, { latency_ms: 500, receipt: { outcome: 'none' } });
    const providers = [{ slug: 'carrier' }];
    const busy = await createTenant(under.asStack(), { name: 'Cluster busy', providers });
    const quiet = await createTenant(under.asStack(), { name: 'Cluster quiet', providers });
    const busyCampaigns = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        sendCampaign(under.asStack(), busy, {
          label: `busy-${i}`,
          prefix: `+6140${10 + i}`,
          count: 200,
          provider: 'carrier',
        }),
      ),
    );
    const quietCampaign = await sendCampaign(under.asStack(), quiet, {
      label: 'quiet',
      prefix: '+61427',
      count: 1,
      provider: 'carrier',
    });
    expect(await untilAllCompleted(under.asStack(), [quietCampaign.id], 60_000)).toBe(true);
    const busyLeft = await Promise.all(
      busyCampaigns.map((campaign) => apiCounters(under.asStack(), busy, campaign)),
    );
    const queuedLeft = busyLeft.reduce((sum, counters) => sum + (counters?.queued ?? 0), 0);
    // In arrival order the quiet message would come after every busy chunk (0 left).
    expect(queuedLeft).toBeGreaterThanOrEqual(2_000);
    expect(
      await untilAllCompleted(
        under.asStack(),
        busyCampaigns.map((campaign) => campaign.id),
        180_000,
      ),
    ).toBe(true);
  });
});

describe('faults on the cluster', () => {
  /** Paced so the campaign is still sending when the fault lands: 200 messages at 20/s. */
  async function pacedCampaign(label: string, prefix: string) {
    const tenant = await createTenant(under.asStack(), {
      name: `Cluster ${label}`,
      providers: [{ slug: 'paced', messagesPerSecond: 20 }],
    });
    const campaign = await sendCampaign(under.asStack(), tenant, {
      label,
      prefix,
      count: 200,
      provider: 'paced',
    });
    return { tenant, campaign };
  }

  it('loses and duplicates nothing when a history process is killed mid-campaign', async () => {
    await setBehaviour(under.simulatorUrl, { latency_ms: 100 });
    const { tenant, campaign } = await pacedCampaign('history-kill', '+61424');
    await untilArrived(under.asStack(), campaign, 50);
    await under.cluster.temporal.kill('history');
    const killedAt = (await readInbox(under.simulatorUrl)).filter(
      (message) => message.body === campaign.body,
    ).length;
    expect(killedAt).toBeLessThan(200);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await under.cluster.temporal.restart('history', 'default');
    await expectExactlyOnce(tenant, campaign);
    // Api and worker processes rode out the outage of the shards' owner.
    expect(under.cluster.exited()).toEqual([]);
  });

  it('loses and duplicates nothing when one of the two workers is killed mid-campaign', async () => {
    await setBehaviour(under.simulatorUrl, { latency_ms: 100 });
    const { tenant, campaign } = await pacedCampaign('worker-kill', '+61425');
    await untilArrived(under.asStack(), campaign, 100);
    await under.cluster.kill('worker-0');
    const killedAt = (await readInbox(under.simulatorUrl)).filter(
      (message) => message.body === campaign.body,
    ).length;
    expect(killedAt).toBeLessThan(200);
    // The other worker carries the campaign to its end alone.
    await expectExactlyOnce(tenant, campaign);
    expect(under.cluster.exited().map((process) => process.name)).toEqual(['worker-0']);
    await under.cluster.startWorker(0);
    expect(under.cluster.exited()).toEqual([]);
  });
});
