import type { Sql } from '../db/client.js';
import type { SmppSessions } from '../providers/smpp/sessions.js';
import { type ChunkRunner, createCampaignActivities, createChunkRunner } from './campaign.js';
import { createHelpReplyActivities } from './help-reply.js';
import { createMaintenanceActivities } from './maintenance.js';
import { createOtpActivities, type OtpSubmitter } from './otp.js';
import { OtpFirst } from './otp-first.js';
import { createReceiptReconciliationActivities } from './receipt-reconciliation.js';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks.js';

export interface ActivityDeps extends Omit<WebhookActivityDeps, 'sql' | 'secret'> {
  sql: Sql;
  /** The operator's `own` provider. */
  ownProviderUrl: string;
  /** Its throughput (OWN_PROVIDER_MESSAGES_PER_SECOND); unset: no limit. */
  ownProviderMessagesPerSecond?: number | null;
  /** Base of the delivery-receipt webhooks handed to providers. */
  publicUrl: string;
  /** RETENTION_DAYS (activities/maintenance.ts); unset keeps personal data. */
  retentionDays?: number;
  /** Keys the hash of every OTP code. */
  secret: string;
  /** The worker's SMPP binds (activities/smpp-binds.ts): SMPP submissions go through them. */
  smppSessions?: SmppSessions;
}

/**
 * Every activity of a worker. `otpFirst` (its codes go before its campaign batches), `runChunk`
 * and `submitter` are the worker process's own, shared with the first tries it makes beside the api.
 */
export function createActivities(
  deps: ActivityDeps,
  shared: { otpFirst?: OtpFirst; runChunk?: ChunkRunner; submitter?: OtpSubmitter } = {},
) {
  const otpFirst = shared.otpFirst ?? new OtpFirst();
  const runChunk = shared.runChunk ?? createChunkRunner({ ...deps, otpFirst });
  return {
    ...createCampaignActivities({ ...deps, otpFirst }, runChunk),
    ...createHelpReplyActivities(deps),
    ...createMaintenanceActivities(deps),
    ...createOtpActivities({ ...deps, otpFirst }, shared.submitter),
    ...createReceiptReconciliationActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
