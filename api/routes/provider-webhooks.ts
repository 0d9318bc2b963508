import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recordDelivery } from '../../db/campaign-messages.js';
import type { ApiDeps } from '../deps.js';

/** The simulator's receipt body (providers/simulator/README.md). */
const receiptSchema = z.object({
  id: z.string(),
  reference: z.string().nullable(),
  status: z.enum(['delivered', 'undelivered']),
  error_code: z.string().nullable(),
  at: z.iso.datetime({ offset: true }),
});

const REFERENCE = /^cmp-(\d+)-(\d+)$/;

/** Delivery receipts from providers. Unknown references are acknowledged and dropped. */
export const providerWebhookRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.post(
    '/webhooks/providers/:provider',
    {
      schema: {
        hide: true,
        params: z.object({ provider: z.string() }),
        body: receiptSchema,
      },
    },
    async (request, reply) => {
      const receipt = request.body;
      const match = REFERENCE.exec(receipt.reference ?? '');
      if (match) {
        await recordDelivery(deps.sql, {
          campaignId: Number(match[1]),
          seq: Number(match[2]),
          provider: request.params.provider,
          providerMessageId: receipt.id,
          status: receipt.status,
          errorCode: receipt.error_code,
          at: new Date(receipt.at),
        });
      }
      return reply.code(204).send();
    },
  );
};
