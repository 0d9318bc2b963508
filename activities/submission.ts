import { setTimeout as sleep } from 'node:timers/promises';
import type { OutboundSms, SmsProvider, SubmitOutcome } from '../providers/types.js';

/** Waits between resubmissions after a retryable failure; then the failure stands. */
const RETRY_DELAYS_MS = [200, 1000, 3000];

/**
 * Submits, resubmitting only after `failed` (the provider said nothing was accepted). Never after
 * `unknown`: that could send twice.
 */
export async function submitWithRetries(
  provider: SmsProvider,
  message: OutboundSms,
): Promise<SubmitOutcome> {
  let outcome = await provider.submit(message);
  for (const delay of RETRY_DELAYS_MS) {
    if (outcome.kind !== 'failed') return outcome;
    await sleep(delay);
    outcome = await provider.submit(message);
  }
  return outcome;
}
