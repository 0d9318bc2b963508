import type { ApiKeyPrincipal } from '../db/api-keys.js';
import { findCampaignViewAndDispatchInfo, insertCampaign } from '../db/campaigns.js';
import { campaignSegments } from '../domain/segments.js';
import type { SendRequest } from '../domain/send-request.js';
import { campaignWorkflowId } from '../workflows/definitions.js';
import type { CommandDeps } from './deps.js';
import { DISPATCH_CONFIRM_MS, dispatchCampaign } from './dispatch-campaign.js';
import { type IdempotentResponse, idempotently } from './idempotency.js';
import { presentCampaign } from './presenters.js';
import { resolveRouting } from './routing.js';

const ENDPOINT = 'POST /api/v1/messages';

async function respond(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  campaignId: number,
  key: string | null,
  answerBy: number,
) {
  // Counters as dispatched (SPEC §3: all queued, none sent), before a fast worker moves them.
  const found = await findCampaignViewAndDispatchInfo(deps.sql, principal.workspaceId, campaignId);
  if (!found) throw new Error(`campaign ${campaignId} vanished`);
  const campaign = found.view;
  const { confirmed, info } = await dispatchCampaign(
    deps,
    { workspaceId: principal.workspaceId, campaignId, key },
    Math.min(Date.now() + DISPATCH_CONFIRM_MS, answerBy),
    found.dispatch,
  );
  const message = presentCampaign({ ...campaign, status: confirmed ? 'queued' : campaign.status });
  const body = confirmed
    ? {
        message: 'Messages queued for sending.',
        data: {
          message,
          queue: {
            success: true,
            campaign_id: campaignId,
            batch_id: info.batchId,
            total_recipients: campaign.totalRecipients,
            requested_recipients: info.requestedRecipients,
            excluded_recipients: info.excludedRecipients,
            message: `${campaign.totalRecipients} ${campaign.totalRecipients === 1 ? 'message' : 'messages'} queued for sending.`,
          },
        },
      }
    : {
        message:
          'The messages were saved but their dispatch could not be confirmed. Check the message status before retrying.',
        data: {
          message,
          queue: {
            success: false,
            campaign_id: campaignId,
            message:
              'Dispatch could not be confirmed; retry with the same Idempotency-Key to resume it.',
          },
        },
      };
  return { confirmed, body: JSON.stringify(body) };
}

/**
 * POST /api/v1/messages, given the body as its schema (domain/send-request.ts) read it and as
 * received (what the Idempotency-Key's request hash covers): claim the key, save the campaign, dispatch it. The dispatch
 * waits for Temporal until `answerBy` (epoch ms) at the latest, then answers `paused`.
 */
export async function sendCampaign(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  { request, received }: { request: SendRequest; received: unknown },
  key: string | null,
  answerBy = Number.POSITIVE_INFINITY,
): Promise<IdempotentResponse> {
  const scope = key ? { workspaceId: principal.workspaceId, endpoint: ENDPOINT, key } : null;

  return idempotently(deps, scope, received, async ({ resourceId, attach }) => {
    let campaignId = resourceId === null ? null : Number(resourceId);
    if (campaignId === null) {
      const routing = await resolveRouting(deps.sql, principal, request);
      // Saved with its workflow id and tied to its key in one transaction: a crash leaves either
      // nothing, or a campaign that the retry with this key finds and dispatches.
      ({ id: campaignId } = await insertCampaign(
        deps.sql,
        {
          workspaceId: principal.workspaceId,
          apiKeyId: principal.keyId,
          reference: request.reference,
          purpose: request.messagePurpose,
          body: request.message,
          senderId: request.senderId,
          ...routing,
          recipients: request.recipients,
          validityHours: deps.env.MESSAGE_VALIDITY_HOURS,
          segments: campaignSegments(request.message, deps.publicUrl),
          workflowIdOf: (id) => campaignWorkflowId(principal.workspaceId, key, id),
        },
        (tx, campaign) => attach(String(campaign.id), tx),
      ));
    }
    // A paused answer is not final: the next retry with this key resumes the same campaign.
    const { confirmed, body } = await respond(deps, principal, campaignId, key, answerBy);
    return { status: 202, body, final: confirmed };
  });
}
