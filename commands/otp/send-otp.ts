import { randomUUID } from 'node:crypto';
import type { ApiKeyPrincipal } from '../../db/api-keys.js';
import { isDatabaseUnavailable } from '../../db/client.js';
import { reserveDailySegments } from '../../db/fraud-guard.js';
import {
  findOtpRequestView,
  InsufficientCreditsError,
  insertOtpRequest,
  type OtpRequestView,
  type OtpStatus,
} from '../../db/otp-requests.js';
import { findWorkspaceSlug } from '../../db/workspaces.js';
import { HeraldError } from '../../domain/errors.js';
import type { OtpSendRequest } from '../../domain/otp.js';
import { otpOutcomes } from '../../telemetry/metrics.js';
import { startOtpWorkflow } from '../../temporal/workflow-starts.js';
import { otpWorkflowId } from '../../workflows/definitions.js';
import type { CommandDeps } from '../deps.js';
import {
  admitOtpSend,
  countRefusal,
  dailyCapReached,
  type OtpRefusal,
} from '../fraud-guard/send-checks.js';
import { type AnswerDeadline, NO_DEADLINE } from '../requests/answer-deadline.js';
import { type IdempotentResponse, idempotently } from '../requests/idempotency.js';
import { type ResolvedOtpSend, resolveOtpSend } from './settings.js';

/** How long the request waits for the provider's answer before reporting `pending`. */
const SUBMISSION_WAIT_MS = 5000;
/**
 * What a request saved late (its deadline near or past) still gives its run's start: a keyless
 * request has no retry to start it later, and the deadline answers `pending` meanwhile.
 */
const LATE_START_MS = 2000;
const ENDPOINT = 'POST /api/v1/otp/send';

const MESSAGES: Record<OtpStatus, string> = {
  accepted: 'Verification code sent.',
  pending:
    'The verification code was submitted but its acceptance is not confirmed yet. Retry with the same Idempotency-Key to check; it will not be sent again.',
  failed: 'The verification code could not be sent.',
};

/** docs/spec.md §2.3, with billing as documented in docs/api.md. */
function presentOtpRequest(
  view: Pick<
    OtpRequestView,
    'id' | 'status' | 'expiresAt' | 'providerSlug' | 'senderId' | 'billingSource' | 'creditsCharged'
  >,
) {
  const settlement =
    view.billingSource === 'connected_provider'
      ? 'external'
      : view.status === 'failed'
        ? 'refunded'
        : view.status === 'pending'
          ? 'pending'
          : 'settled';
  return {
    message: MESSAGES[view.status],
    data: {
      request_id: view.id,
      status: view.status,
      expires_at: view.expiresAt.toISOString(),
      provider: view.providerSlug,
      sender_id: view.senderId,
      billing: {
        source: view.billingSource,
        settlement_status: settlement,
        credits_charged: view.creditsCharged,
      },
    },
  };
}

/**
 * What a send answers when its save's outcome cannot be known (Postgres went away, or the
 * deadline came, while it was being written): the request it may have saved.
 */
function uncertainSave(requestId: string): HeraldError {
  return new HeraldError('service_unavailable', {
    message: `Service temporarily unavailable. OTP request ${requestId} may have been saved: if its code arrives, verify it with this request_id; send again only if none arrives.`,
  });
}

/** The 402 of a workspace short of credits: what the code needs, and how an operator adds them. */
async function notEnoughCredits(deps: CommandDeps, workspaceId: number, needed: number) {
  const slug = (await findWorkspaceSlug(deps.sql, workspaceId).catch(() => undefined)) ?? '<slug>';
  return new HeraldError('insufficient_credits', {
    message:
      `The workspace does not have enough credits: this code needs ${needed}. ` +
      `An operator adds credits with \`herald credits add --workspace ${slug} --amount <n>\`.`,
  });
}

/**
 * Saves and charges the request in a transaction the deadline cannot contradict: a deadline that
 * answered first rolls it back; one that comes while it commits names the request; once it is
 * saved, the deadline answers `pending` (commands/requests/answer-deadline.ts).
 */
async function createRequest(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  send: ResolvedOtpSend & { expiresAt: Date },
  requestId: string,
  key: string | null,
  deadline: AnswerDeadline,
) {
  const uncertain = uncertainSave(requestId);
  const { guard } = send;
  let committing = false;
  // Set inside the transaction's callback, which the compiler does not follow.
  let refusal = undefined as OtpRefusal | undefined;
  try {
    await deps.sql.begin(async (tx) => {
      refusal = await admitOtpSend(tx, {
        workspaceId: principal.workspaceId,
        recipient: send.recipient,
        guard,
      });
      // A breaker trip commits its record; other refusals leave nothing.
      if (refusal?.commit) return;
      if (refusal) throw refusal.error;
      await insertOtpRequest(tx, {
        ...send,
        id: requestId,
        workspaceId: principal.workspaceId,
        apiKeyId: principal.keyId,
        userId: principal.userId,
        workflowId: otpWorkflowId(principal.workspaceId, key, requestId),
      });
      const cap = guard.dailySegments;
      if (
        cap !== null &&
        !(await reserveDailySegments(tx, {
          workspaceId: principal.workspaceId,
          segments: send.segments,
          cap,
          nearPercent: guard.capNearPercent,
        }))
      ) {
        refusal = { rule: 'daily_cap', error: dailyCapReached(cap), commit: false };
        throw refusal.error;
      }
      deadline.saving({ status: 503, body: JSON.stringify({ message: uncertain.message }) });
      committing = true;
    });
  } catch (error) {
    // The connection went while committing: Postgres may have committed or not.
    if (committing && isDatabaseUnavailable(error)) throw uncertain;
    deadline.notSaved();
    if (refusal) countRefusal(deps.sql, principal.workspaceId, refusal.rule);
    if (error instanceof InsufficientCreditsError)
      throw await notEnoughCredits(deps, principal.workspaceId, error.needed);
    throw error;
  }
  if (refusal) {
    deadline.notSaved();
    countRefusal(deps.sql, principal.workspaceId, refusal.rule);
    throw refusal.error;
  }
  const pending = presentOtpRequest({
    id: requestId,
    status: 'pending',
    expiresAt: send.expiresAt,
    providerSlug: send.providerSlug,
    senderId: send.senderId,
    billingSource: send.billingSource,
    creditsCharged: send.billingSource === 'credits' ? send.segments : 0,
  });
  deadline.saved({ status: 202, body: JSON.stringify(pending) });
}

/**
 * The key that names the request's run: none, so the run is named by the request, since one key
 * may now stand for several users' requests, each needing its own run. A request saved before
 * keeps the run named by its key, which its retry must find rather than start another.
 */
function runKey(workspaceId: number, key: string | null, saved: OtpRequestView | undefined) {
  const namedByKey =
    key !== null &&
    saved !== undefined &&
    saved.workflowId === otpWorkflowId(workspaceId, key, saved.id);
  return namedByKey ? key : null;
}

/**
 * POST /api/v1/otp/send, given the body as its schema (domain/otp.ts) read it and as received
 * (what the Idempotency-Key's request hash covers): resolve settings, save and charge, submit through Temporal,
 * waiting for the provider's answer until the deadline's `answerBy` at the latest, then `pending`.
 */
export async function sendOtp(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  body: { request: OtpSendRequest; received: unknown },
  key: string | null,
  deadline: AnswerDeadline = NO_DEADLINE,
): Promise<IdempotentResponse> {
  // A code is verified by its user only: the key is that user's, not the whole workspace's.
  const scope = key
    ? { workspaceId: principal.workspaceId, endpoint: ENDPOINT, key, userId: principal.userId }
    : null;

  return idempotently(deps, scope, body.received, async ({ resourceId, attach }) => {
    const requestId = resourceId ?? randomUUID();
    const view = async () =>
      (await findOtpRequestView(deps.sql, principal.workspaceId, requestId)) as OtpRequestView;
    let current = resourceId ? await view() : undefined;
    const workflowKey = runKey(principal.workspaceId, key, current);
    // A retry continues the saved request as it was sent, whatever its service says now.
    let started = current && {
      codeLength: current.codeLength,
      expiresAt: current.expiresAt,
      purpose: current.purpose,
    };
    if (!started) {
      const send = await resolveOtpSend(deps.sql, principal, body.request);
      if (!resourceId) await attach(requestId);
      const expiresAt = new Date(Date.now() + send.expiresInMinutes * 60_000);
      await createRequest(
        deps,
        principal,
        { ...send, expiresAt },
        requestId,
        workflowKey,
        deadline,
      );
      started = { codeLength: send.codeLength, expiresAt, purpose: send.purpose };
      // In `herald start` the code leaves before the run starts, which finds it claimed: on a
      // small machine the two would compete for the same cores. Not past the answer's deadline.
      const tryBy = Math.min(Date.now() + SUBMISSION_WAIT_MS, deadline.answerBy);
      await deps.firstTries?.code(
        {
          requestId,
          codeLength: send.codeLength,
          workspaceId: principal.workspaceId,
          provider: send.provider,
        },
        Math.max(0, tryBy - Date.now()),
      );
    }
    if (!current || current.status === 'pending') {
      await startOtpWorkflow(
        deps.temporal,
        { workspaceId: principal.workspaceId, requestId, key: workflowKey, ...started },
        Math.min(
          Date.now() + SUBMISSION_WAIT_MS,
          Math.max(deadline.answerBy, Date.now() + LATE_START_MS),
        ),
      );
      current = await view();
    }
    otpOutcomes.inc({ outcome: current.status });
    // `pending` is not final: a retry with this key reports the outcome then known.
    return {
      status: 202,
      body: JSON.stringify(presentOtpRequest(current)),
      final: current.status !== 'pending',
    };
  });
}
