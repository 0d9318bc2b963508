import { randomInt } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Sql } from '../db/client.js';
import { optOut } from '../db/opt-outs.js';
import {
  claimOtpAttempt,
  findOtpForSubmission,
  finishOtpRequest,
  markOtpAccepted,
  markOtpFailed,
  type OtpForSubmission,
  type OtpOutcome,
} from '../db/otp-requests.js';
import type { OtpFirstTry } from '../domain/first-try.js';
import { otpMessageReference } from '../domain/message-reference.js';
import { type OtpSubmission, renderOtpMessage } from '../domain/otp.js';
import { OWN_PROVIDER_SLUG } from '../domain/provider-definition.js';
import { resolveProviders as adaptersOf } from '../providers/registry.js';
import type { SmppSessions } from '../providers/smpp/sessions.js';
import type { SmsProvider } from '../providers/types.js';
import { keyedHash } from '../security/tokens.js';
import { fixedFence, LeaseLost, RECORDING_GRACE_MS, SUBMISSION_LEASE_MS } from './lease.js';
import { OtpFirst } from './otp-first.js';
import { resolveProviders, submitWithRetries } from './submission.js';
import { createPacer } from './throughput.js';

export interface OtpActivityDeps {
  sql: Sql;
  secret: string;
  ownProviderUrl: string;
  ownProviderMessagesPerSecond?: number | null;
  /** The worker's SMPP binds: SMPP submissions go through them. */
  smppSessions?: SmppSessions;
  publicUrl: string;
  /** The worker's OTP-first gate, shared with its campaign activities. */
  otpFirst?: OtpFirst;
}

/** A request whose code is to be submitted: by its run, or by a first try that knows its route. */
type CodeToSubmit = { requestId: string; codeLength: number } | OtpFirstTry;

/**
 * "Not found" at the provider is final for a code only after this: past the claiming attempt's
 * lease (its submission may be in flight until then), with room for a provider that records a
 * submission late. A code counted failed is refunded, so this errs long.
 */
const NOT_FOUND_GRACE_MS = 2 * RECORDING_GRACE_MS;

/** A uniformly random code of `length` digits, leading zeroes included. */
export function generateCode(length: number): string {
  return String(randomInt(0, 10 ** length)).padStart(length, '0');
}

/**
 * Submits OTP requests' codes, ahead of the worker's campaign batches: from a request's run (its
 * local activity) or, in a process that also serves the api, beside its start (a first try,
 * activities/first-try.ts). Whichever claims a request first is the only one that ever submits it.
 */
export function createOtpSubmitter(deps: OtpActivityDeps) {
  const otpFirst = deps.otpFirst ?? new OtpFirst();
  async function providerFor(request: OtpForSubmission): Promise<SmsProvider | undefined> {
    const [provider] = await resolveProviders(deps.sql, deps, request.workspaceId, [
      request.providerSlug,
    ]);
    return provider;
  }

  /** The provider a first try names, and a pacer holding one slot of it, asked for now. */
  function withSlotReserved(input: OtpFirstTry) {
    const slug = input.provider?.slug ?? OWN_PROVIDER_SLUG;
    const records = input.provider ? [input.provider] : [];
    const [provider] = adaptersOf(records, deps, input.workspaceId, [slug]);
    if (!provider) return undefined;
    const pacer = createPacer(deps.sql, input.workspaceId);
    pacer.reserveAhead(provider, 1);
    return { provider, pacer, workspaceId: input.workspaceId };
  }

  /** An earlier attempt's outcome is unknown: only the provider can say whether it went out. */
  async function reconcileRequest(request: OtpForSubmission): Promise<OtpSubmission> {
    if (request.status !== 'pending') return { status: request.status };
    const provider = await providerFor(request);
    const found = await provider?.lookup?.(otpMessageReference(request.id)).catch(() => undefined);
    if (found?.found) {
      await markOtpAccepted(deps.sql, request.id, found.providerMessageId);
      return { status: 'accepted' };
    }
    const age = Date.now() - (request.attemptStartedAt?.getTime() ?? 0);
    if (request.expired || (found?.found === false && age > NOT_FOUND_GRACE_MS)) {
      await markOtpFailed(deps.sql, request.id, 'the provider has no record of the submission');
      return { status: 'failed' };
    }
    return { status: 'pending' };
  }

  /**
   * Generates the code, stores only its keyed hash, and submits it. The plaintext lives only
   * in this function's memory: it is not returned, logged or saved.
   */
  async function submitCode(input: CodeToSubmit, signal?: AbortSignal): Promise<OtpSubmission> {
    const { requestId } = input;
    const code = generateCode(input.codeLength);
    // A first try knows the request's provider: its slot is reserved while the claim is made.
    const known = 'provider' in input ? withSlotReserved(input) : undefined;
    // The claim is the lease: once only, never renewed, nobody else ever submits this request.
    const claimedAt = performance.now();
    const request = await claimOtpAttempt(
      deps.sql,
      requestId,
      input.codeLength,
      keyedHash(deps.secret, 'otp-code-hash', code),
    );
    if (!request) {
      // Retried, or expired before it could go: never send a second code for one request.
      const existing = await findOtpForSubmission(deps.sql, requestId);
      return existing ? reconcileRequest(existing) : { status: 'failed' };
    }
    const ready =
      known?.provider.slug === request.providerSlug && known.workspaceId === request.workspaceId
        ? known
        : undefined;
    const provider = ready?.provider ?? (await providerFor(request));
    if (!provider) {
      await markOtpFailed(deps.sql, requestId, `provider ${request.providerSlug} is not active`);
      return { status: 'failed' };
    }
    const fence = fixedFence(claimedAt + SUBMISSION_LEASE_MS, signal);
    const outcome = await submitWithRetries(
      provider,
      {
        to: request.recipient,
        from: request.senderId,
        body: renderOtpMessage(request.bodyTemplate, code),
        reference: otpMessageReference(requestId),
        callbackUrl: new URL(`/webhooks/providers/${provider.slug}`, deps.publicUrl).toString(),
        // A code is worthless after it expires.
        validUntil: request.expiresAt,
      },
      ready?.pacer ?? createPacer(deps.sql, request.workspaceId),
      { fence },
      'otp',
    ).catch((error: unknown) => {
      if (!(error instanceof LeaseLost)) throw error;
      // Refused before it left Herald: nothing was sent.
      return { kind: 'failed' as const, reason: `not submitted: ${error.message}` };
    });
    switch (outcome.kind) {
      case 'accepted':
        await markOtpAccepted(deps.sql, requestId, outcome.providerMessageId);
        return { status: 'accepted' };
      case 'rejected':
        if (outcome.optedOut)
          await optOut(deps.sql, request.workspaceId, request.recipient, 'reply');
        await markOtpFailed(deps.sql, requestId, `${provider.slug}: ${outcome.reason}`);
        return { status: 'failed' };
      case 'failed':
      case 'expired':
        await markOtpFailed(deps.sql, requestId, `${provider.slug}: ${outcome.reason}`);
        return { status: 'failed' };
      case 'unknown':
        return reconcileRequest(request);
    }
  }

  return {
    /** One code's submission (submitCode), ahead of this worker's campaign batches. */
    submit(input: CodeToSubmit, signal?: AbortSignal): Promise<OtpSubmission> {
      return otpFirst.submittingCode(() => submitCode(input, signal));
    },

    /** What became of a submission whose outcome was unknown. */
    async reconcile(requestId: string): Promise<OtpSubmission> {
      const request = await findOtpForSubmission(deps.sql, requestId);
      return request ? reconcileRequest(request) : { status: 'failed' };
    },
  };
}

export type OtpSubmitter = ReturnType<typeof createOtpSubmitter>;

export function createOtpActivities(
  deps: OtpActivityDeps,
  submitter: OtpSubmitter = createOtpSubmitter(deps),
) {
  return {
    submitOtp(input: { requestId: string; codeLength: number }): Promise<OtpSubmission> {
      return submitter.submit(input, Context.current().cancellationSignal);
    },

    reconcileOtp({ requestId }: { requestId: string }): Promise<OtpSubmission> {
      return submitter.reconcile(requestId);
    },

    async finishOtp({ requestId }: { requestId: string }): Promise<OtpOutcome> {
      return finishOtpRequest(deps.sql, requestId);
    },
  };
}
