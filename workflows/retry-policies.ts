import type { RetryPolicy } from '@temporalio/common';
import { NON_RETRYABLE_ACTIVITY_FAILURES } from '../domain/errors.js';

/**
 * An activity retry policy: retries what may pass (Postgres or a provider away, a worker lost),
 * never a failure the error catalogue (domain/errors.ts) states is permanent.
 */
export function retryUnlessPermanent(
  backoff: Omit<RetryPolicy, 'nonRetryableErrorTypes'>,
): RetryPolicy {
  return { ...backoff, nonRetryableErrorTypes: [...NON_RETRYABLE_ACTIVITY_FAILURES] };
}
