import type { ApiKeyPrincipal } from '../db/api-keys.js';
import {
  lockVerificationCandidate,
  lockVerificationSubject,
  markOtpVerified,
  recordFailedVerification,
} from '../db/otp-requests.js';
import { HeraldError } from '../domain/errors.js';
import {
  FAILED_VERIFICATION_WINDOW_MINUTES,
  MAX_FAILED_VERIFICATIONS,
  type OtpVerifyRequest,
} from '../domain/otp.js';
import { matchesKeyedHash } from '../security/tokens.js';
import type { CommandDeps } from './deps.js';

/** Compared against when there is no stored hash, so every failure costs the same work. */
const NO_HASH = Buffer.alloc(32);

/**
 * POST /api/v1/otp/verify, given a body its schema (domain/otp.ts) has read. One transaction, serialized per user and recipient, locks the request, compares in constant time and
 * either marks it verified or records a failure: two concurrent correct codes verify once, and
 * every failure takes the same path to the same answer.
 */
export async function verifyOtp(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  request: OtpVerifyRequest,
): Promise<void> {
  const verified = await deps.sql.begin(async (tx) => {
    await lockVerificationSubject(tx, {
      workspaceId: principal.workspaceId,
      userId: principal.userId,
      recipient: request.recipient,
    });
    const candidate = await lockVerificationCandidate(tx, {
      workspaceId: principal.workspaceId,
      userId: principal.userId,
      recipient: request.recipient,
      requestId: request.requestId,
      purpose: request.purpose,
      windowMinutes: FAILED_VERIFICATION_WINDOW_MINUTES,
    });
    const stored = candidate?.codeHash ?? NO_HASH;
    const matches = matchesKeyedHash(deps.secret, 'otp-code-hash', request.code, stored);
    const acceptable =
      candidate !== undefined &&
      candidate.codeHash !== null &&
      candidate.usable &&
      candidate.recentFailures < MAX_FAILED_VERIFICATIONS;
    if (matches && acceptable && (await markOtpVerified(tx, candidate.id))) return true;
    await recordFailedVerification(tx, {
      workspaceId: principal.workspaceId,
      userId: principal.userId,
      recipient: request.recipient,
      purpose: candidate?.purpose ?? request.purpose ?? '',
    });
    return false;
  });
  if (!verified) throw new HeraldError('otp_verification_failed');
}
