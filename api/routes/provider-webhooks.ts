import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ReceiptCaches } from '../../commands/messaging/receipt-caches.js';
import { recordReceipt, recordReply } from '../../commands/messaging/record-receipt.js';
import type { ReceiptRequest } from '../../domain/provider-definition.js';
import type { ApiDeps } from '../deps.js';

/**
 * The message reference a receipt is about: in the callback URL's `ref` (set by adapters whose
 * vendor does not echo one, e.g. Twilio) or in the body (the simulator's `reference`).
 */
function referenceOf(query: { ref?: string }, body: unknown): string | null {
  if (query.ref) return query.ref;
  const reference = (body as { reference?: unknown } | null)?.reference;
  return typeof reference === 'string' ? reference : null;
}

/**
 * Delivery receipts from providers. The reference names the message and so the workspace; that
 * workspace's provider `<slug>` verifies and parses the receipt (its adapter's parseReceipt).
 * A reference that cannot name a Herald message (absent, malformed, out of range) is 400 and a
 * slug that cannot name a provider 404; a well-formed reference to a message or provider Herald
 * does not know is acknowledged and dropped (204), so the provider stops retrying; an unsigned or
 * wrongly signed receipt is 403.
 */
export const providerWebhookRoutes: FastifyPluginAsyncZod<{
  deps: ApiDeps & { receipts: ReceiptCaches };
}> = async (app, { deps }) => {
  // Twilio posts application/x-www-form-urlencoded; scoped to this plugin.
  await app.register(formbody);
  const origin = new URL(deps.publicUrl).origin;
  /** What an adapter verifies: the URL the provider called (PUBLIC_URL's origin), headers, body. */
  const asProviderRequest = (request: FastifyRequest): ReceiptRequest => ({
    url: origin + request.url,
    headers: request.headers,
    body: request.body,
  });
  const refuse = (
    reply: FastifyReply,
    parsed: { kind: 'forbidden' } | { kind: 'invalid'; message: string },
  ) =>
    parsed.kind === 'forbidden'
      ? reply.code(403).send({ message: 'Invalid signature.' })
      : reply.code(400).send({ message: parsed.message });

  app.post(
    '/webhooks/providers/:provider',
    {
      schema: {
        hide: true,
        params: z.object({ provider: z.string() }),
        querystring: z.object({ ref: z.string().optional() }),
      },
    },
    async (request, reply) => {
      const outcome = await recordReceipt(
        deps,
        request.params.provider,
        referenceOf(request.query, request.body),
        asProviderRequest(request),
      );
      switch (outcome.kind) {
        case 'no_such_provider':
          return reply.code(404).send({ message: 'No such provider.' });
        case 'no_reference':
          return reply
            .code(400)
            .send({ message: 'The receipt names no Herald message reference.' });
        case 'forbidden':
        case 'invalid':
          return refuse(reply, outcome);
        default:
          return reply.code(204).send();
      }
    },
  );

  /**
   * Recipients' replies, for providers that post them (Twilio's "A message comes in" webhook, set
   * to `<PUBLIC_URL>/webhooks/inbound/<workspace>/<provider>`): STOP opts the sender out of the
   * workspace's marketing messages, START opts them back in; other text is acknowledged.
   */
  app.post(
    '/webhooks/inbound/:workspace/:provider',
    {
      schema: {
        hide: true,
        params: z.object({ workspace: z.string(), provider: z.string() }),
      },
    },
    async (request, reply) => {
      const { workspace, provider } = request.params;
      const outcome = await recordReply(deps, workspace, provider, asProviderRequest(request));
      if (outcome.kind === 'no_such_provider')
        return reply.code(404).send({ message: 'No such workspace provider takes replies.' });
      if (outcome.kind !== 'recorded') return refuse(reply, outcome);
      return reply.code(204).send();
    },
  );
};
