/**
 * Retention (RETENTION_DAYS) as the daily maintenance runs it (activities/maintenance.ts
 * dropExpiredPersonalData, in a mock activity context that takes its heartbeats): a campaign and
 * an OTP request older than the window lose their body, text and numbers, failed verifications
 * go, old webhook events keep only the masked number and an old reply (inbound_messages) keeps
 * only its masked sender, no text, while recent ones keep everything and every report (REST,
 * console, MCP, guard, credits) reads exactly as before.
 */
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import { addCredits } from '../../db/credits.js';
import { storeInboundMessage } from '../../db/inbound-messages.js';
import { maskedNumber } from '../../domain/phone.js';
import { columnsHolding, everyReport } from '../support/reports.js';
import { numbers, waitForCompletion } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;
const [oldRecipient, otherOldRecipient, recentRecipient] = numbers(3) as [string, string, string];
let oldCampaign: number;
let recentCampaign: number;
let oldOtp: string;
const NOW = new Date();

const bearer = () => ({ authorization: `Bearer ${tenant.token}` });

async function sendSms(recipients: string[], message: string) {
  const response = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { ...bearer(), 'idempotency-key': randomUUID() },
    payload: { recipients, message, message_purpose: 'marketing' },
  });
  expect(response.statusCode, response.body).toBe(202);
  const id = response.json().data.message.id as number;
  await waitForCompletion(stack, tenant.token, id);
  return id;
}

/** Runs retention's batches as the workflow does, until none comes back full. */
async function runRetention(
  retentionDays: number,
  batch = { campaignBatchSize: 1, rowBatchSize: 1 },
) {
  const { dropExpiredPersonalData } = createMaintenanceActivities({
    sql: stack.sql,
    retentionDays,
  });
  const environment = new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 });
  let heartbeats = 0;
  environment.on('heartbeat', () => heartbeats++);
  let dropped = 0;
  let calls = 0;
  for (;;) {
    calls++;
    const result: Awaited<ReturnType<typeof dropExpiredPersonalData>> = await environment.run(
      dropExpiredPersonalData,
      batch,
    );
    dropped += result.dropped;
    if (!result.more) return { dropped, calls, heartbeats };
  }
}

const reports = () => everyReport(stack, tenant, [oldCampaign, recentCampaign], NOW);

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 10);
  const privateUrls = {
    ...stack.admin,
    env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true },
  };
  await webhookCreate(privateUrls, {
    workspace: tenant.slug,
    url: 'http://127.0.0.1:9/herald',
    events: 'all',
  });
});

afterAll(() => stack?.close());

describe('retention', () => {
  it('leaves everything in place when it is off (RETENTION_DAYS=0)', {
    timeout: 60_000,
  }, async () => {
    oldCampaign = await sendSms([oldRecipient, otherOldRecipient], 'Old sale {opt_out_url}');
    recentCampaign = await sendSms([recentRecipient], 'New sale');
    const otp = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: bearer(),
      payload: { recipient: oldRecipient, purpose: 'login' },
    });
    expect(otp.statusCode, otp.body).toBe(202);
    oldOtp = otp.json().data.request_id;
    const wrong = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: bearer(),
      payload: { recipient: oldRecipient, code: '000000', request_id: oldOtp },
    });
    expect(wrong.statusCode).toBe(422);
    // 100 days ago: the campaign, the code, its failed verification, and its webhook events
    // (dispatched then; the dispatcher takes only undispatched ones).
    await stack.sql`
      update campaigns set created_at = created_at - interval '100 days',
        completed_at = completed_at - interval '100 days'
      where id = ${oldCampaign}`;
    await stack.sql`
      update otp_requests set created_at = created_at - interval '100 days' where id = ${oldOtp}`;
    await stack.sql`
      update otp_verification_failures set failed_at = failed_at - interval '100 days'
      where workspace_id = ${tenant.workspaceId}`;
    // A reply of each recipient, as a provider delivers it: the old one 100 days ago.
    for (const [from, text] of [
      [oldRecipient, `Call me on ${otherOldRecipient}`],
      [recentRecipient, 'See you Friday'],
    ] as const)
      await storeInboundMessage(stack.sql, {
        workspaceId: tenant.workspaceId,
        providerSlug: 'own',
        providerMessageId: `sim_in_${randomUUID().replaceAll('-', '')}`,
        from,
        to: 'Simulator',
        text,
        asksForHelp: false,
      });
    await stack.sql`
      update inbound_messages set received_at = received_at - interval '100 days'
      where workspace_id = ${tenant.workspaceId} and from_number = ${oldRecipient}`;
    await stack.sql`
      update webhook_events set dispatched_at = now() - interval '100 days'
      where workspace_id = ${tenant.workspaceId}
        and coalesce(data->>'recipient', data->>'from') <> ${recentRecipient}`;

    expect(await runRetention(0)).toEqual({ dropped: 0, calls: 1, heartbeats: 0 });
    expect(Object.keys(await columnsHolding(stack, [oldRecipient.slice(1)]))).toEqual([
      'campaign_messages.recipient',
      'inbound_messages.from_number',
      'opt_out_links.recipient',
      'otp_requests.recipient',
      'otp_verification_failures.recipient',
      'webhook_events.data',
    ]);
  });

  it('drops old bodies, texts and numbers in bounded batches, every report unchanged', async () => {
    const before = await reports();
    const run = await runRetention(90);
    // One campaign and one row per call: the campaign, the OTP request, the failure, the events.
    expect(run.calls).toBeGreaterThan(2);
    expect(run.heartbeats).toBe(run.calls * 5);
    expect(await reports()).toEqual(before);

    const [campaign] = await stack.sql`
      select body, personal_data_dropped_at is not null as dropped from campaigns
      where id = ${oldCampaign}`;
    expect(campaign).toEqual({ body: '', dropped: true });
    expect(
      await stack.sql`
        select recipient from campaign_messages where campaign_id = ${oldCampaign} order by seq`,
    ).toEqual([
      { recipient: maskedNumber(oldRecipient) },
      { recipient: maskedNumber(otherOldRecipient) },
    ]);
    const [request] = await stack.sql`
      select recipient, body_template, personal_data_dropped_at is not null as dropped
      from otp_requests where id = ${oldOtp}`;
    expect(request).toEqual({
      recipient: maskedNumber(oldRecipient),
      bodyTemplate: '',
      dropped: true,
    });
    // The opt-out link stays: it is how the recipient can still opt out of the workspace.
    expect(Object.keys(await columnsHolding(stack, [oldRecipient.slice(1)]))).toEqual([
      'opt_out_links.recipient',
    ]);

    // The old reply keeps its place in the counts: its sender masked, its text gone.
    expect(
      await stack.sql`
        select from_number, text, personal_data_dropped_at is not null as dropped
        from inbound_messages where workspace_id = ${tenant.workspaceId} order by id`,
    ).toEqual([
      { fromNumber: maskedNumber(oldRecipient), text: '', dropped: true },
      { fromNumber: recentRecipient, text: 'See you Friday', dropped: false },
    ]);
    expect(Object.keys(await columnsHolding(stack, [otherOldRecipient.slice(1)]))).toEqual([
      'opt_out_links.recipient',
    ]);

    // The recent campaign keeps its body and number.
    const [recent] = await stack.sql`
      select c.body, m.recipient, c.personal_data_dropped_at from campaigns c
      join campaign_messages m on m.campaign_id = c.id where c.id = ${recentCampaign}`;
    expect(recent).toEqual({
      body: 'New sale',
      recipient: recentRecipient,
      personalDataDroppedAt: null,
    });

    // Done once: the next run finds nothing.
    expect(await runRetention(90)).toEqual({ dropped: 0, calls: 1, heartbeats: 5 });
  });
});
