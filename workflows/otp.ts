import {
  condition,
  defineSignal,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { searchAttributes } from './definitions.js';

export interface OtpWorkflowInput {
  requestId: string;
  /** Digits of the code the submission generates. */
  codeLength: number;
  /** Epoch milliseconds after which the code cannot be verified. */
  expiresAt: number;
}

/** The provider outcome of the submission; `pending` while acceptance is uncertain. */
export interface OtpSubmission {
  status: 'pending' | 'accepted' | 'failed';
}

/** Answered once the submission's outcome is known: the send request waits on it. */
export const submissionUpdate = defineUpdate<OtpSubmission>('submission');
/** Sent by the api when the code is verified or superseded, so the run ends without waiting. */
export const settledSignal = defineSignal('settled');

/** How often an uncertain submission is looked up at the provider again. */
const RECONCILE_INTERVAL = '5 seconds';

// Local activities: each is a short database or provider call, and the submission is the send
// request's latency, so none is worth an extra task round trip. The code is generated inside
// submitOtp and never enters workflow history.
const { submitOtp, reconcileOtp, finishOtp } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
});

const setStatus = (status: string) =>
  upsertSearchAttributes({ [searchAttributes.status.name]: [status] });

/** One OTP request: submit the code, then wait until it is verified, superseded or expired. */
export async function otpWorkflow({
  requestId,
  codeLength,
  expiresAt,
}: OtpWorkflowInput): Promise<string> {
  let submission: OtpSubmission | undefined;
  let settled = false;
  setHandler(submissionUpdate, async () => {
    await condition(() => submission !== undefined);
    return submission as OtpSubmission;
  });
  setHandler(settledSignal, () => {
    settled = true;
  });

  submission = await submitOtp({ requestId, codeLength });
  while (submission.status === 'pending' && Date.now() < expiresAt) {
    await sleep(RECONCILE_INTERVAL);
    submission = await reconcileOtp({ requestId });
  }
  setStatus(submission.status);

  if (submission.status === 'accepted') {
    await condition(() => settled, Math.max(0, expiresAt - Date.now()));
  }
  const outcome = await finishOtp({ requestId });
  setStatus(outcome);
  return outcome;
}
