import type { CampaignStatus } from '../domain/campaign-status.js';
import type { Sql, TransactionSql } from './client.js';

/**
 * A scheduled campaign's time has come: it is queued unless it was canceled meanwhile (or is
 * still paused, its dispatch unrecorded). Returns its status now.
 */
export async function beginScheduledCampaign(
  sql: Sql,
  campaignId: number,
): Promise<CampaignStatus | undefined> {
  const [row] = await sql<{ status: CampaignStatus }[]>`
    with begun as (
      update campaigns set status = 'queued'
      where id = ${campaignId} and status in ('paused', 'scheduled')
      returning status
    )
    select status from begun
    union all
    select status from campaigns where id = ${campaignId} and not exists (select 1 from begun)`;
  return row?.status;
}

export type CancelOutcome =
  | { kind: 'not_found' }
  | { kind: 'completed' }
  | { kind: 'canceled'; workflowId: string | null; alreadyCanceled: boolean };

/** A campaign's messages as its cancel left them: the claimed ones still queued are settling. */
export interface CanceledCounts {
  canceled: number;
  settling: number;
  sent: number;
  failed: number;
}

/**
 * Cancels a campaign of this workspace, in one transaction: its queued messages that no
 * submission attempt has claimed become `canceled`, then the campaign (campaign.canceled is
 * written then, by trigger). Claimed messages finish as they will; claiming one takes the
 * campaign's status into account (db/campaign-messages.ts markAttempts), so none is claimed
 * after this commits. A completed campaign cannot be canceled; a canceled one is left as it is.
 */
export async function cancelCampaign(
  sql: Sql,
  workspaceId: number,
  campaignId: number,
  /** Runs in the cancel's transaction, only when this cancel changed it, with its counts then. */
  alongside?: (tx: TransactionSql, counts: CanceledCounts) => Promise<void>,
): Promise<CancelOutcome> {
  return sql.begin(async (tx) => {
    const [campaign] = await tx<{ status: CampaignStatus; workflowId: string | null }[]>`
      select status, workflow_id from campaigns
      where id = ${campaignId} and workspace_id = ${workspaceId}
      for update`;
    if (!campaign) return { kind: 'not_found' } as const;
    const { status, workflowId } = campaign;
    if (status === 'completed') return { kind: 'completed' } as const;
    if (status === 'canceled') return { kind: 'canceled', workflowId, alreadyCanceled: true };
    // Messages first, so campaign.canceled counts them.
    await tx`
      update campaign_messages set status = 'canceled'
      where campaign_id = ${campaignId} and status = 'queued' and attempt_started_at is null`;
    await tx`
      update campaigns set status = 'canceled', completed_at = now()
      where id = ${campaignId}`;
    if (alongside) {
      const [counts] = await tx<CanceledCounts[]>`
        select (count(*) filter (where status = 'canceled'))::int as canceled,
               (count(*) filter (where status = 'queued'))::int as settling,
               (count(*) filter (where status = 'sent'))::int as sent,
               (count(*) filter (where status = 'failed'))::int as failed
        from campaign_messages where campaign_id = ${campaignId}`;
      await alongside(tx, counts as CanceledCounts);
    }
    return { kind: 'canceled', workflowId, alreadyCanceled: false } as const;
  });
}
