import type { Sql } from './client.js';

export interface CampaignView {
  id: number;
  reference: string | null;
  status: 'queued' | 'paused' | 'completed';
  totalRecipients: number;
  queuedCount: number;
  sentCount: number;
  failedCount: number;
  createdAt: Date;
  completedAt: Date | null;
}

/** A campaign of this workspace with counters derived from its message rows. */
export async function findCampaignView(
  sql: Sql,
  workspaceId: number,
  campaignId: number,
): Promise<CampaignView | undefined> {
  const [campaign] = await sql<CampaignView[]>`
    select c.id, c.reference, c.status, c.created_at, c.completed_at,
           count(m.seq)::int as total_recipients,
           (count(*) filter (where m.status = 'queued'))::int as queued_count,
           (count(*) filter (where m.status = 'sent'))::int as sent_count,
           (count(*) filter (where m.status = 'failed'))::int as failed_count
    from campaigns c
    left join campaign_messages m on m.campaign_id = c.id
    where c.id = ${campaignId} and c.workspace_id = ${workspaceId}
    group by c.id`;
  return campaign;
}
