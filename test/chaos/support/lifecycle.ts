import { Client, Connection } from '@temporalio/client';
import type { InboxMessage } from './audit.js';
import type { SentCampaign } from './campaign.js';
import type { ChaosStack } from './stack.js';

/** What the campaign lifecycle scenarios (issue 27: schedule, cancel) look at besides the inbox. */

/** The campaign's run as Temporal has it (`COMPLETED`, `RUNNING`, ...); null when not found. */
export async function campaignRunStatus(
  stack: ChaosStack,
  campaignId: number,
): Promise<string | null> {
  const [row] = await stack.withSql(
    (sql) => sql<{ workflowId: string | null }[]>`
      select workflow_id as "workflowId" from campaigns where id = ${campaignId}`,
  );
  if (!row?.workflowId) return null;
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection, namespace: 'default' });
    const description = await client.workflow.getHandle(row.workflowId).describe();
    return description.status.name;
  } catch {
    return null;
  } finally {
    await connection.close();
  }
}

/** The campaign's messages by status, from Postgres. */
export async function messageStatuses(
  stack: ChaosStack,
  campaignId: number,
): Promise<Record<string, number>> {
  const rows = await stack.withSql(
    (sql) => sql<{ status: string; n: number }[]>`
      select status, count(*)::int as n from campaign_messages
      where campaign_id = ${campaignId} group by status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** The campaign's messages at the inbox (its body is its own). */
export function arrivalsOf(inbox: InboxMessage[], campaign: SentCampaign): InboxMessage[] {
  return inbox.filter((message) => message.body === campaign.body);
}

/** Recipients of the campaign that did not receive it exactly once. */
export function notExactlyOnce(inbox: InboxMessage[], campaign: SentCampaign): string[] {
  const copies = new Map<string, number>();
  for (const message of arrivalsOf(inbox, campaign))
    copies.set(message.to, (copies.get(message.to) ?? 0) + 1);
  const asked = new Set(campaign.recipients);
  const strangers = [...copies.keys()].filter((to) => !asked.has(to));
  return [...campaign.recipients.filter((to) => copies.get(to) !== 1), ...strangers];
}
