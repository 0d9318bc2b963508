import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listRecipients, presentRecipients } from '../../commands/messaging/campaign-recipients.js';
import { HeraldError } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { principalOf } from '../plugins/auth.js';
import { authErrorResponses, notFoundSchema } from '../schemas/common.js';
import {
  recipientListingResponseSchema,
  recipientQueryRefusedResponse,
  recipientQuerySchema,
} from '../schemas/message-recipients.js';

/** As GET /messages/{campaign} reads it: anything else is a campaign that is not there. */
const CAMPAIGN_ID = /^[1-9]\d{0,15}$/;

export const messageRecipientRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/messages/:campaign/recipients',
    {
      config: { ability: 'messages:read' },
      schema: {
        summary: "A campaign's recipients and each one's status, a page at a time",
        description:
          'Keyset pages in the order the campaign holds its recipients (its messages, then the numbers its send left out). Numbers are masked (•••• 1234) unless the API key also has the recipients:read ability.',
        tags: ['Messages'],
        params: z.object({
          campaign: z.string().describe('Integer batch id (data.message.id of the send)'),
        }),
        querystring: recipientQuerySchema,
        response: {
          200: recipientListingResponseSchema,
          ...authErrorResponses,
          404: notFoundSchema,
          422: recipientQueryRefusedResponse,
        },
      },
    },
    async (request) => {
      const { campaign: rawId } = request.params;
      const principal = principalOf(request);
      const listing = CAMPAIGN_ID.test(rawId)
        ? await listRecipients(deps, {
            campaignId: Number(rawId),
            workspaceId: principal.workspaceId,
            query: request.query,
            fullNumbers: principal.abilities.includes('recipients:read'),
          })
        : undefined;
      if (!listing)
        throw new HeraldError('not_found', { message: `Campaign ${rawId} was not found.` });
      return { data: presentRecipients(listing) };
    },
  );
};
