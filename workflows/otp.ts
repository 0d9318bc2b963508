import {
  condition,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { OtpSubmission } from '../domain/otp.js';
import { OTP_SUBMISSION_UPDATE } from './definitions.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface OtpWorkflowInput {
  requestId: string;
  /** Digits of the code the submission generates. */
  codeLength: number;
  /** Epoch milliseconds after which the code cannot be verified. */
  expiresAt: number;
}

/** Answered once the submission's outcome is known: the send request waits on it. */
export const submissionUpdate = defineUpdate<OtpSubmission>(OTP_SUBMISSION_UPDATE);

/** How often an uncertain submission is looked up at the provider again. */
const RECONCILE_INTERVAL = '5 seconds';
/**
 * Each step is one provider call or a few queries, and the submission is the latency of the send
 * request waiting on it: a step this slow is retried rather than waited on.
 */
const ONE_CALL_TIMEOUT = '15 seconds';

// Local activities: each is a short database or provider call, and the submission is the send
// request's latency, so none is worth an extra task round trip. The code is generated inside
// submitOtp and never enters workflow history.
const { submitOtp, reconcileOtp, finishOtp } = proxyLocalActivities<Activities>({
  startToCloseTimeout: ONE_CALL_TIMEOUT,
  retry: retryUnlessPermanent({
    initialInterval: '200 milliseconds',
    maximumInterval: '5 seconds',
  }),
});

/**
 * One OTP request: submit the code, hold the request open on a durable timer until its expiry,
 * then record how it ended (verified, superseded, expired or failed). Verification itself is an
 * atomic Postgres update in the api: waking the run on every verify would put a Temporal round
 * trip on that path for no gain, so the run reads the outcome when the code's life is over.
 */
export async function otpWorkflow({
  requestId,
  codeLength,
  expiresAt,
}: OtpWorkflowInput): Promise<string> {
  let submission: OtpSubmission | undefined;
  setHandler(submissionUpdate, async () => {
    await condition(() => submission !== undefined);
    return submission as OtpSubmission;
  });

  submission = await submitOtp({ requestId, codeLength });
  while (submission.status === 'pending' && Date.now() < expiresAt) {
    await sleep(RECONCILE_INTERVAL);
    submission = await reconcileOtp({ requestId });
  }
  setRunStatus(submission.status);

  if (submission.status === 'accepted') await sleep(Math.max(0, expiresAt - Date.now()));
  const outcome = await finishOtp({ requestId });
  setRunStatus(outcome);
  return outcome;
}
