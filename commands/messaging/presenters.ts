import type { CampaignView } from '../../db/campaigns.js';

/** docs/spec.md §2.1 message (campaign) object. */
export function presentCampaign(campaign: CampaignView) {
  return {
    id: campaign.id,
    reference: campaign.reference,
    status: campaign.status,
    total_recipients: campaign.totalRecipients,
    queued_count: campaign.queuedCount,
    sent_count: campaign.sentCount,
    failed_count: campaign.failedCount,
    canceled_count: campaign.canceledCount,
    delivered_count: campaign.deliveredCount,
    undelivered_count: campaign.undeliveredCount,
    created_at: campaign.createdAt.toISOString(),
    scheduled_at: campaign.scheduledAt?.toISOString() ?? null,
    completed_at: campaign.completedAt?.toISOString() ?? null,
  };
}
