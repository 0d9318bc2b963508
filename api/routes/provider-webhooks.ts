import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recordDelivery } from '../../db/campaign-messages.js';
import { applyInboundReply } from '../../db/opt-outs.js';
import { recordOtpDelivery } from '../../db/otp-requests.js';
import { findReferenceWorkspace } from '../../db/providers.js';
import { findWorkspaceBySlug } from '../../db/workspaces.js';
import { inboundParserFor, receiptParserFor } from '../../providers/registry.js';
import type { ReceiptRequest } from '../../providers/types.js';
import type { ApiDeps } from '../deps.js';

/** Campaign ids are bigint, but every id Herald issues is a safe integer; seq is an integer. */
const CAMPAIGN_REFERENCE = /^cmp-([1-9]\d{0,15})-([1-9]\d{0,9})$/;
const MAX_SEQ = 2 ** 31 - 1;
const OTP_REFERENCE = /^otp-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** Workspace and provider slugs as the CLI makes them (cli/commands/admin.ts), a little wider. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

type Target = { campaignId: number; seq: number } | { otpRequestId: string };

/** The message a reference names, or undefined when it cannot name one (malformed, out of range). */
function targetOf(reference: string): Target | undefined {
  const campaign = CAMPAIGN_REFERENCE.exec(reference);
  if (campaign) {
    const campaignId = Number(campaign[1]);
    const seq = Number(campaign[2]);
    return Number.isSafeInteger(campaignId) && seq <= MAX_SEQ ? { campaignId, seq } : undefined;
  }
  const otp = OTP_REFERENCE.exec(reference);
  return otp ? { otpRequestId: otp[1] as string } : undefined;
}

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
export const providerWebhookRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
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
      const slug = request.params.provider;
      if (!SLUG.test(slug)) return reply.code(404).send({ message: 'No such provider.' });
      const reference = referenceOf(request.query, request.body);
      const target = reference === null ? undefined : targetOf(reference);
      if (!target)
        return reply.code(400).send({ message: 'The receipt names no Herald message reference.' });
      const workspaceId = await findReferenceWorkspace(deps.sql, target);
      const parser =
        workspaceId === undefined
          ? undefined
          : await receiptParserFor(deps.sql, deps.secret, workspaceId, slug);
      if (!parser) return reply.code(204).send();

      const parsed = parser.parseReceipt(asProviderRequest(request));
      if (parsed.kind === 'forbidden' || parsed.kind === 'invalid') return refuse(reply, parsed);
      if (parsed.kind === 'ignored') return reply.code(204).send();

      const { receipt } = parsed;
      // A body naming another message than the one the URL was issued for is not trusted.
      if (receipt.reference !== null && receipt.reference !== reference)
        return reply.code(204).send();
      const delivery = {
        provider: slug,
        providerMessageId: receipt.providerMessageId,
        status: receipt.status,
        errorCode: receipt.errorCode,
        at: receipt.at,
      };
      if ('campaignId' in target) await recordDelivery(deps.sql, { ...target, ...delivery });
      else await recordOtpDelivery(deps.sql, { requestId: target.otpRequestId, ...delivery });
      return reply.code(204).send();
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
      const { workspace: workspaceSlug, provider } = request.params;
      const named = SLUG.test(workspaceSlug) && SLUG.test(provider);
      const workspace = named ? await findWorkspaceBySlug(deps.sql, workspaceSlug) : undefined;
      const parser =
        workspace && (await inboundParserFor(deps.sql, deps.secret, workspace.id, provider));
      if (!workspace || !parser)
        return reply.code(404).send({ message: 'No such workspace provider takes replies.' });
      const parsed = parser.parseInbound(asProviderRequest(request));
      if (parsed.kind !== 'inbound') return refuse(reply, parsed);
      await applyInboundReply(deps.sql, {
        workspaceId: workspace.id,
        from: parsed.message.from,
        body: parsed.message.body,
      });
      return reply.code(204).send();
    },
  );
};
