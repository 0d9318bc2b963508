import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cancelCampaign } from '../../commands/messaging/cancel-campaign.js';
import { presentCampaign } from '../../commands/messaging/presenters.js';
import { sendCampaign } from '../../commands/messaging/send-campaign.js';
import { sendAdmission } from '../../commands/requests/admission.js';
import { findCampaignView } from '../../db/campaigns.js';
import { HeraldError } from '../../domain/errors.js';
import { sendRequestSchema } from '../../domain/send-request.js';
import type { ApiDeps } from '../deps.js';
import { parseIdempotencyKey, replyIdempotently } from '../idempotency-header.js';
import { apiKeyActorOf, principalOf } from '../plugins/auth.js';
import { deadlineOf } from '../request-deadline.js';
import {
  authErrorResponses,
  idempotencyConflictResponse,
  idempotencyKeyHeaderSchema,
  notFoundSchema,
  sendLimitedResponse,
  sendUnavailableResponse,
} from '../schemas/common.js';
import {
  campaignCanceledResponseSchema,
  campaignLookupResponseSchema,
  cancelConflictResponse,
  sendRefusedResponse,
  sendResponseSchema,
} from '../schemas/messages.js';

const CAMPAIGN_ID = /^[1-9]\d{0,15}$/;

export const messageRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (app, { deps }) => {
  app.post(
    '/messages',
    {
      // docs/api.md "Admission": sends are admitted only as fast as they can be confirmed.
      config: { ability: 'messages:send', admission: sendAdmission },
      schema: {
        summary: 'Send an SMS to 1–1,000 recipients',
        tags: ['Messages'],
        headers: idempotencyKeyHeaderSchema,
        body: sendRequestSchema,
        response: {
          202: sendResponseSchema,
          ...authErrorResponses,
          409: idempotencyConflictResponse,
          422: sendRefusedResponse,
          429: sendLimitedResponse(
            "the workspace's daily cap would be exceeded",
            "The workspace's daily cap of 10000 segments would be exceeded; it resets at 2026-11-28T00:00:00.000Z.",
          ),
          503: sendUnavailableResponse,
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
        summary: 'Look a batch up',
        tags: ['Messages'],
        params: z.object({
          campaign: z.string().describe('Integer batch id (data.message.id of the send)'),
        }),
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

  app.post(
    '/messages/:campaign/cancel',
    {
      config: { ability: 'messages:send' },
      schema: {
        summary: 'Cancel a scheduled or sending batch',
        description:
          'Idempotent; no body. From the answer on, no message of the campaign is claimed for submission: at most the ones already claimed (up to 200: one batch of 50 in each of its 4 lanes) still reach a provider and settle as sent or failed; every other queued message becomes canceled. A scheduled campaign sends nothing. The answer is the campaign as it stands then; `completed_at` is the time of the cancel.',
        tags: ['Messages'],
        params: z.object({
          campaign: z.string().describe('Integer batch id (data.message.id of the send)'),
        }),
        response: {
          200: campaignCanceledResponseSchema,
          ...authErrorResponses,
          404: notFoundSchema,
          409: cancelConflictResponse,
        },
      },
    },
    async (request) => {
      const { campaign: rawId } = request.params;
      if (!CAMPAIGN_ID.test(rawId))
        throw new HeraldError('not_found', { message: `Campaign ${rawId} was not found.` });
      // Audited, unlike a send: a cancel is an action on the workspace's batch, not a message.
      const { campaign } = await cancelCampaign(
        deps,
        apiKeyActorOf(request),
        principalOf(request).workspaceId,
        Number(rawId),
      );
      return { data: { message: presentCampaign(campaign) } };
    },
  );
};
