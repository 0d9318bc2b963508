import type { StoredProvider } from './provider-definition.js';

/**
 * A small campaign (a transactional message or an alert: a handful of recipients) is first tried
 * at once, outside the chunk activities: beside its start in a process that runs the api and a
 * worker (activities/first-try.ts), and as a local activity inside its run's first workflow task
 * (workflows/campaign.ts). Whatever a first try leaves, the run's chunks take on under the same
 * submission lease, so nothing is sent twice.
 */
export const FIRST_TRY_MAX_MESSAGES = 10;

/**
 * An OTP request just saved, as its first try takes it: with its provider's record as the send
 * read it (null for `own`), so that the try reserves the provider's slot beside its claim instead
 * of reading the provider again after it.
 */
export interface OtpFirstTry {
  requestId: string;
  codeLength: number;
  workspaceId: number;
  provider: StoredProvider | null;
}
