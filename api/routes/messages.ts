import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { presentCampaign } from '../../commands/presenters.js';
import { sendCampaign } from '../../commands/send-campaign.js';
import { findCampaignView } from '../../db/campaigns.js';
import { HeraldError } from '../../domain/errors.js';
import { sendRequestSchema } from '../../domain/send-request.js';
import type { ApiDeps } from '../deps.js';
import { parseIdempotencyKey, replyIdempotently } from '../idempotency-header.js';
import { principalOf } from '../plugins/auth.js';
import { deadlineOf } from '../request-deadline.js';
import {
  authErrorResponses,
  idempotencyKeyHeaderSchema,
  messageOnlySchema,
  notFoundSchema,
  sendLimitedResponse,
  validationErrorSchema,
} from '../schemas/common.js';
import { campaignLookupResponseSchema, sendResponseSchema } from '../schemas/messages.js';

const CAMPAIGN_ID = /^[1-9]\d{0,15}$/;

export const messageRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (app, { deps }) => {
  app.post(
    '/messages',
    {
      config: { ability: 'messages:send' },
      schema: {
        summary: 'Send an SMS to 1–1,000 recipients',
        tags: ['Messages'],
        headers: idempotencyKeyHeaderSchema,
        body: sendRequestSchema,
        response: {
          202: sendResponseSchema,
          ...authErrorResponses,
          409: messageOnlySchema.describe(
            'A request with this Idempotency-Key is still processing',
          ),
          422: validationErrorSchema,
          429: sendLimitedResponse("the workspace's daily cap would be exceeded"),
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      return replyIdempotently(
        reply,
        await sendCampaign(
          deps,
          principalOf(request),
          { request: request.body, received: request.receivedBody },
          key,
          deadlineOf(request),
        ),
      );
    },
  );

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
