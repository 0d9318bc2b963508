import type { ApiKeyPrincipal } from '../../db/api-keys.js';
import { findCampaignViewAndDispatchInfo, type SavedCampaign } from '../../db/campaigns.js';
import { isDatabaseUnavailable } from '../../db/client.js';
import { HeraldError } from '../../domain/errors.js';
import type { SendRequest } from '../../domain/send-request.js';
import type { CommandDeps, FirstTry } from '../deps.js';
import { sendAdmission } from '../requests/admission.js';
import {
  type AnswerDeadline,
  type DeadlineAnswer,
  NO_DEADLINE,
} from '../requests/answer-deadline.js';
import {
  type IdempotentResponse,
  type IdempotentWork,
  idempotently,
} from '../requests/idempotency.js';
import { DISPATCH_CONFIRM_MS, dispatchCampaign } from './dispatch-campaign.js';
import { presentCampaign } from './presenters.js';
import { saveCampaign } from './save-campaign.js';

const ENDPOINT = 'POST /api/v1/messages';

/**
 * docs/spec.md §4.1's answers for a saved campaign: queued (or scheduled, with `send_at`) once its
 * dispatch is confirmed, else paused.
 */
function answerFor(saved: SavedCampaign, confirmed: boolean, key: string | null): DeadlineAnswer {
  const { view, dispatch } = saved;
  const scheduled = view.scheduledAt !== null && view.scheduledAt.getTime() > Date.now();
  const status =
    confirmed && view.status === 'paused' ? (scheduled ? 'scheduled' : 'queued') : view.status;
  const message = presentCampaign({ ...view, status });
  const total = view.totalRecipients;
  const messages = `${total} ${total === 1 ? 'message' : 'messages'}`;
  const body = confirmed
    ? {
        message: scheduled ? 'Messages scheduled for sending.' : 'Messages queued for sending.',
        data: {
          message,
          queue: {
            success: true,
            campaign_id: view.id,
            batch_id: dispatch.batchId,
            total_recipients: total,
            requested_recipients: dispatch.requestedRecipients,
            excluded_recipients: dispatch.excludedRecipients,
            message: scheduled
              ? `${messages} scheduled for ${view.scheduledAt?.toISOString()}.`
              : `${messages} queued for sending.`,
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
            campaign_id: view.id,
            message: key
              ? 'Dispatch could not be confirmed; Herald dispatches the campaign once it can, and a retry with the same Idempotency-Key resumes it now.'
              : 'Dispatch could not be confirmed; Herald dispatches the campaign once it can. Do not send it again.',
          },
        },
      };
  return { status: 202, body: JSON.stringify(body) };
}

/**
 * What a send answers when its commit's outcome cannot be known (Postgres went away, or the
 * deadline came, while it committed): the campaign it may have saved, to look up before retrying.
 * One that was saved is dispatched by Herald itself (commands/messaging/dispatch-paused.ts).
 */
function uncertainSave(campaignId: number): HeraldError {
  return new HeraldError('service_unavailable', {
    message: `Service temporarily unavailable. Campaign ${campaignId} may have been saved, and is then sent: look it up (GET /api/v1/messages/${campaignId}) before retrying; retry only if it is not found.`,
  });
}

/**
 * Saves the campaign (commands/messaging/save-campaign.ts) and ties it to its key in one
 * transaction whose commit the deadline cannot contradict: a deadline that answered first rolls it
 * back; one that comes while it commits answers that it may have been saved; once it committed,
 * the deadline answers `paused`.
 */
async function saveSend(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  request: SendRequest,
  key: string | null,
  attach: IdempotentWork['attach'],
  deadline: AnswerDeadline,
): Promise<SavedCampaign & { started: () => void; firstTry: FirstTry | undefined }> {
  const origin = {
    workspaceId: principal.workspaceId,
    apiKey: principal,
    source: 'api',
    name: null,
    idempotencyKey: key,
  } as const;
  let committing: number | undefined;
  let saved: SavedCampaign;
  let started = () => {};
  const firstTry = deps.firstTries?.reserve({
    messages: request.recipients.length,
    scheduledAt: request.sendAt ?? null,
  });
  try {
    saved = await saveCampaign(deps, origin, request, {
      // In the save's round trip.
      alongside: async (tx, campaign) => {
        await Promise.all([attach(String(campaign.id), tx), firstTry?.hold(tx, campaign.id)]);
      },
      committing: (campaign) => {
        // Too late to confirm its start once committed: roll back and refuse (docs/api.md "Admission").
        started = sendAdmission.committing(deadline.answerBy);
        const uncertain = uncertainSave(campaign.id);
        deadline.saving({ status: 503, body: JSON.stringify({ message: uncertain.message }) });
        committing = campaign.id;
      },
    });
  } catch (error) {
    firstTry?.cancel();
    // The connection went while committing: Postgres may have committed or not.
    if (committing !== undefined && isDatabaseUnavailable(error)) throw uncertainSave(committing);
    deadline.notSaved();
    throw error;
  }
  return { ...saved, started, firstTry };
}

/**
 * POST /api/v1/messages, given the body as its schema (domain/send-request.ts) read it and as
 * received (what the Idempotency-Key's request hash covers): claim the key, save the campaign,
 * dispatch it. The dispatch waits for Temporal until the deadline's `answerBy` at the latest,
 * then answers `paused`. Once the campaign is saved the answer is 202 whatever fails after: a
 * paused campaign is dispatched by Herald itself (commands/messaging/dispatch-paused.ts).
 */
export async function sendCampaign(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  { request, received }: { request: SendRequest; received: unknown },
  key: string | null,
  deadline: AnswerDeadline = NO_DEADLINE,
): Promise<IdempotentResponse> {
  const scope = key ? { workspaceId: principal.workspaceId, endpoint: ENDPOINT, key } : null;

  return idempotently(deps, scope, received, async ({ resourceId, attach }) => {
    let saved: SavedCampaign;
    let started = () => {};
    if (resourceId === null) {
      let firstTry: FirstTry | undefined;
      ({ started, firstTry, ...saved } = await saveSend(
        deps,
        principal,
        request,
        key,
        attach,
        deadline,
      ));
      deadline.saved(answerFor(saved, false, key));
      // Its messages leave before the start, which waits for them (briefly): the run takes on
      // whatever the try leaves.
      await firstTry?.begin(saved.dispatch.messages);
    } else {
      // A retry with the key: the campaign an earlier attempt saved, as it stands now.
      const found = await findCampaignViewAndDispatchInfo(
        deps.sql,
        principal.workspaceId,
        Number(resourceId),
      );
      if (!found) throw new Error(`campaign ${resourceId} vanished`);
      saved = { id: found.view.id, ...found };
    }
    const confirmed = await dispatchCampaign(
      deps,
      { workspaceId: principal.workspaceId, campaignId: saved.view.id },
      Math.min(Date.now() + DISPATCH_CONFIRM_MS, deadline.answerBy),
      saved.dispatch,
      () => {
        started();
        // Confirmed: should recording it outlast the deadline, the deadline answers queued.
        deadline.saved(answerFor(saved, true, key));
      },
    ).then(
      (outcome) => outcome.confirmed,
      // Saved but not recorded as dispatched (Postgres away): the sweeper finishes it.
      () => false,
    );
    // A paused answer is not final: the next retry with this key resumes the same campaign.
    const { status, body } = answerFor(saved, confirmed, key);
    return { status, body, final: confirmed };
  });
}
