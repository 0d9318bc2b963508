import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recordDelivery } from '../../db/campaign-messages.js';
import { recordOtpDelivery } from '../../db/otp-requests.js';
import type { ApiDeps } from '../deps.js';

/** The simulator's receipt body (providers/simulator/README.md). */
const receiptSchema = z.object({
  id: z.string(),
  reference: z.string().nullable(),
  status: z.enum(['delivered', 'undelivered']),
  error_code: z.string().nullable(),
  at: z.iso.datetime({ offset: true }),
});

const CAMPAIGN_REFERENCE = /^cmp-(\d+)-(\d+)$/;
const OTP_REFERENCE = /^otp-([0-9a-f-]{36})$/;

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
      const delivery = {
        provider: request.params.provider,
        providerMessageId: receipt.id,
        status: receipt.status,
        errorCode: receipt.error_code,
        at: new Date(receipt.at),
      };
      const campaign = CAMPAIGN_REFERENCE.exec(receipt.reference ?? '');
      const otp = OTP_REFERENCE.exec(receipt.reference ?? '');
      if (campaign) {
        await recordDelivery(deps.sql, {
          campaignId: Number(campaign[1]),
          seq: Number(campaign[2]),
          ...delivery,
        });
      } else if (otp) {
        await recordOtpDelivery(deps.sql, { requestId: otp[1] as string, ...delivery });
      }
      return reply.code(204).send();
    },
  );
};
