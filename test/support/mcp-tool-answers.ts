/**
 * What every real MCP client test (TypeScript SDK of each era, Python SDK, Inspector) seeds,
 * calls and expects back, so each client is held to the same answers.
 */
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import type { McpServerUnderTest, McpUser } from './mcp.js';

export const heraldToolNames = [
  'get_campaign_report',
  'get_completed_campaign_summary',
  'get_delivery_summary',
  'get_quick_send_report',
  'get_team_statistics',
  'list_recent_campaigns',
  'list_recent_quick_sends',
];

export interface SeededBatches {
  campaignId: number;
  quickSendId: number;
}

/** One named campaign (2 recipients, both sent) and one API Quick Send (3 recipients). */
export async function seedBatches(mcp: McpServerUnderTest, user: McpUser): Promise<SeededBatches> {
  const { sql } = mcp;
  const insertBatch = async (
    source: 'campaign' | 'api',
    name: string | null,
    recipients: string[],
  ) => {
    const [batch] = await sql<{ id: number }[]>`
      insert into campaigns (workspace_id, source, name, purpose, body, routing_type,
                             provider_slug, status, requested_recipients)
      values (${user.workspaceId}, ${source}, ${name}, 'marketing', 'Hello', 'direct', 'own',
              'queued', ${recipients.length})
      returning id`;
    const id = (batch as { id: number }).id;
    await sql`
      insert into campaign_messages (campaign_id, seq, recipient)
      select ${id}, ordinality, recipient from unnest(${recipients}::text[]) with ordinality as r(recipient, ordinality)`;
    return id;
  };
  const campaignId = await insertBatch('campaign', 'Spring sale', ['+61400000001', '+61400000002']);
  await sql`update campaign_messages set status = 'sent', submitted_at = now(),
            provider_slug = 'own', provider_message_id = 'c-' || seq where campaign_id = ${campaignId}`;
  await sql`update campaigns set status = 'completed', completed_at = now() where id = ${campaignId}`;

  const quickSendId = await insertBatch('api', null, [
    '+61400000003',
    '+61400000004',
    '+61400000005',
  ]);
  await sql`update campaign_messages set status = case when seq = 3 then 'failed' else 'sent' end,
            submitted_at = case when seq = 3 then null else now() end
            where campaign_id = ${quickSendId}`;
  await sql`update campaign_messages set delivery_status = 'delivered', delivered_at = now()
            where campaign_id = ${quickSendId} and seq = 1`;
  await sql`update campaigns set status = 'completed', completed_at = now() where id = ${quickSendId}`;
  return { campaignId, quickSendId };
}

export type ToolCall = [name: string, args: Record<string, unknown>];

/** All seven tools, then one call the server must refuse (a campaign id as a Quick Send). */
export function sevenCallsAndARefusal({ campaignId, quickSendId }: SeededBatches): ToolCall[] {
  return [
    ['list_recent_campaigns', { limit: 5 }],
    ['get_campaign_report', { campaign_id: campaignId }],
    ['list_recent_quick_sends', {}],
    ['get_quick_send_report', { quick_send_id: quickSendId }],
    ['get_delivery_summary', { days: 7 }],
    ['get_completed_campaign_summary', {}],
    ['get_team_statistics', {}],
    ['get_quick_send_report', { quick_send_id: campaignId }],
  ];
}

interface ListedTool {
  name: string;
  annotations?: { readOnlyHint?: boolean };
}

interface CallResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: Record<string, unknown>;
}

export function expectHeraldTools(tools: ListedTool[]) {
  expect(tools.map((tool) => tool.name).sort()).toEqual(heraldToolNames);
  for (const tool of tools) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
}

/** The answers to `sevenCallsAndARefusal`, in its order, as the TypeScript SDK test expects them. */
export function expectSevenAnswersAndARefusal(results: CallResult[], seeded: SeededBatches) {
  const { campaignId, quickSendId } = seeded;
  expect(results).toHaveLength(8);
  const answers = results.slice(0, 7).map((result) => {
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  });
  type Answer = Record<string, unknown>;
  const [campaigns, campaign, quickSends, quickSend, summary, completed, team] = answers as [
    Answer,
    Answer,
    Answer,
    Answer,
    Answer,
    Answer,
    Answer,
  ];
  expect((campaigns.campaigns as { id: number }[]).map((item) => item.id)).toEqual([campaignId]);
  expect(campaign.campaign).toMatchObject({ id: campaignId, name: 'Spring sale', recipients: 2 });
  expect((quickSends.quick_sends as { id: number }[]).map((item) => item.id)).toEqual([
    quickSendId,
  ]);
  expect(quickSend.quick_send).toMatchObject({
    id: quickSendId,
    source: 'api',
    recipients: 3,
    sent: 2,
    failed_to_send: 1,
    delivered: 1,
    awaiting_delivery: 1,
    delivery_rate_percent: 50,
  });
  expect(summary).toMatchObject({ period_days: 7, period_type: 'rolling', sent: 4, delivered: 1 });
  expect(completed).toMatchObject({ period_days: 30, recipients: 2, sent: 2 });
  expect(team).toEqual({ total_members: 1, active_members: 1, pending_invites: 0 });
  expect(results[7]?.isError).toBe(true);
}

export function launchChromium(): Promise<Browser> {
  return import('playwright-core').then(({ chromium }) =>
    chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox'],
    }),
  );
}

/**
 * The person's part of the OAuth flow, in a real browser: Herald's sign-in page, then its
 * consent page (which must name the client), then Approve. The browser is then sent on to the
 * client's callback; `page` is left there for the caller to close.
 */
export async function approveInBrowser(
  page: import('playwright-core').Page,
  authorizationUrl: string,
  user: McpUser,
  clientName: string,
) {
  await page.goto(authorizationUrl);
  await signInAndApprove(page, user, clientName);
}

/** As `approveInBrowser`, on a page the client itself sent to Herald's authorization URL. */
export async function signInAndApprove(
  page: import('playwright-core').Page,
  user: McpUser,
  clientName: string,
) {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Approve' }).waitFor();
  await expect(page.locator('body').textContent()).resolves.toContain(clientName);
  await expect(page.locator('body').textContent()).resolves.toContain(user.workspaceName);
  await page.getByRole('button', { name: 'Approve' }).click();
}
