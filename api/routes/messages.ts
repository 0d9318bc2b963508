import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type CampaignView, findCampaignView } from '../../db/campaigns.js';
import { HeraldError } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { principalOf } from '../plugins/auth.js';
import { authErrorResponses, notFoundSchema } from '../schemas/common.js';
import { campaignLookupResponseSchema } from '../schemas/messages.js';

export function presentCampaign(campaign: CampaignView) {
  return {
    id: campaign.id,
    reference: campaign.reference,
    status: campaign.status,
    total_recipients: campaign.totalRecipients,
    queued_count: campaign.queuedCount,
    sent_count: campaign.sentCount,
    failed_count: campaign.failedCount,
    created_at: campaign.createdAt.toISOString(),
    completed_at: campaign.completedAt?.toISOString() ?? null,
  };
}

const CAMPAIGN_ID = /^[1-9]\d{0,15}$/;

export const messageRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (app, { deps }) => {
  app.get(
    '/messages/:campaign',
    {
      config: { ability: 'messages:read' },
      schema: {
        summary: 'Look a campaign up',
        tags: ['Messages'],
        params: z.object({ campaign: z.string().describe('Integer campaign id') }),
        response: {
          200: campaignLookupResponseSchema,
          ...authErrorResponses,
          404: notFoundSchema,
        },
      },
    },
    async (request) => {
      const { campaign: rawId } = request.params;
      const campaign = CAMPAIGN_ID.test(rawId)
        ? await findCampaignView(deps.sql, principalOf(request).workspaceId, Number(rawId))
        : undefined;
      if (!campaign)
        throw new HeraldError('not_found', { message: `Campaign ${rawId} was not found.` });
      return { data: { message: presentCampaign(campaign) } };
    },
  );
};
