import type { ApiKeyPrincipal } from '../../db/api-keys.js';
import { verifyOtpCode } from '../../db/otp-requests.js';
import { HeraldError } from '../../domain/errors.js';
import {
  FAILED_VERIFICATION_WINDOW_MINUTES,
  MAX_FAILED_VERIFICATIONS,
  type OtpVerifyRequest,
} from '../../domain/otp.js';
import { keyedHashCandidates } from '../../security/tokens.js';
import { otpOutcomes } from '../../telemetry/metrics.js';
import type { CommandDeps } from '../deps.js';

/**
 * POST /api/v1/otp/verify, given a body its schema (domain/otp.ts) has read. One atomic step in
 * Postgres, serialized per user and recipient (db/otp-requests.ts verifyOtpCode): two concurrent
 * correct codes verify once, and every failure takes the same path to the same answer. Only keyed
 * hashes of the code leave the api, under both hash schemes, always both computed.
 */
export async function verifyOtp(
  deps: CommandDeps,
  principal: ApiKeyPrincipal,
  request: OtpVerifyRequest,
): Promise<void> {
  const outcome = await verifyOtpCode(deps.sql, {
    workspaceId: principal.workspaceId,
    userId: principal.userId,
    recipient: request.recipient,
    requestId: request.requestId,
    purpose: request.purpose,
    codeHashes: keyedHashCandidates(deps.secret, 'otp-code-hash', request.code),
    windowMinutes: FAILED_VERIFICATION_WINDOW_MINUTES,
    maxFailures: MAX_FAILED_VERIFICATIONS,
  });
  otpOutcomes.inc({ outcome: outcome === 'failed' ? 'failed_verification' : outcome });
  // Exhausted answers as any failure does: the client learns nothing of the limit.
  if (outcome !== 'verified') throw new HeraldError('otp_verification_failed');
}
