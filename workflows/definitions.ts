import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Shared by the api, the worker and workflows: the task queue, ids and search attributes. */

export const TASK_QUEUE = 'herald';
/**
 * OTP requests run on a queue of their own, with their own worker slots: a login code never
 * waits behind campaign chunks (docs/reliability.md "Capacity and fairness").
 */
export const OTP_TASK_QUEUE = 'herald-otp';
/**
 * Webhook deliveries likewise: a customer endpoint that hangs for its 15 s timeout must not hold
 * the slots campaign chunks run in.
 */
export const WEBHOOK_TASK_QUEUE = 'herald-webhooks';

/**
 * Campaign work of one workspace shares one fairness key: when chunks back up, Temporal hands
 * the free slots out round-robin across workspaces, so one tenant's large sends cannot hold
 * another's small one. Activities inherit it from their workflow.
 */
export const workspacePriority = (workspaceId: number) => ({
  fairnessKey: `workspace-${workspaceId}`,
});

export const searchAttributes = {
  workspaceId: defineSearchAttributeKey('HeraldWorkspaceId', SearchAttributeType.KEYWORD),
  kind: defineSearchAttributeKey('HeraldKind', SearchAttributeType.KEYWORD),
  campaignId: defineSearchAttributeKey('HeraldCampaignId', SearchAttributeType.INT),
  status: defineSearchAttributeKey('HeraldStatus', SearchAttributeType.KEYWORD),
} as const;

/*
 * Workflow ids. Each is a function of what makes the work unique, so that a start repeated after
 * a crash or a retry finds the run already there instead of starting a second one.
 */

/** A campaign: by its Idempotency-Key when it has one, else by its id. */
export function campaignWorkflowId(workspaceId: number, key: string | null, campaignId: number) {
  return `campaign/${workspaceId}/${key ?? `id-${campaignId}`}`;
}

/** An OTP request: by its Idempotency-Key when it has one, else by its id. */
export function otpWorkflowId(workspaceId: number, key: string | null, requestId: string) {
  return `otp/${workspaceId}/${key ?? requestId}`;
}

/** HELP's automatic answer to one inbound message: started once whatever redelivers it. */
export function helpReplyWorkflowId(workspaceId: number, inboundId: number) {
  return `help-reply/${workspaceId}/${inboundId}`;
}

/** One event's delivery to one endpoint: the runs started before webhook lanes. */
export function webhookWorkflowId(workspaceId: number, eventId: string, endpointId: number) {
  return `webhook/${workspaceId}/${eventId}/${endpointId}`;
}

/**
 * The deliveries of one subject's events (`message-<campaign>-<seq>`, `otp-<request>`,
 * `campaign-<id>`) to one endpoint, in order: a lane. One run at a time; a later event starts a
 * new run once the last one ended.
 */
export function webhookLaneWorkflowId(workspaceId: number, subject: string, endpointId: number) {
  return `webhook/${workspaceId}/${subject}/${endpointId}`;
}

/**
 * Signal to a campaign's run: its campaign was canceled (committed in Postgres first, which is
 * what stops its messages): a scheduled run stops waiting, a sending one starts no more chunks.
 */
export const CAMPAIGN_CANCELED_SIGNAL = 'campaignCanceled';

/** Signal to a lane's run: one more event, in the order the lane's events happened. */
export const WEBHOOK_EVENT_SIGNAL = 'webhookEvent';
export interface WebhookEventSignal {
  /** The event's `msg_…` id (webhook-id). */
  eventId: string;
}

/**
 * The OTP run's update that answers the send request with the submission's outcome (an
 * OtpSubmission). Named here so that the start side need not load the workflow code.
 */
export const OTP_SUBMISSION_UPDATE = 'submission';

/** The HeraldKind search attribute: what a run is. */
export type WorkflowKind = 'campaign' | 'otp' | 'cleanup' | 'webhook' | 'receipts' | 'reply';

/** The daily maintenance run: one fixed schedule id, created or updated at worker start-up. */
export const MAINTENANCE_SCHEDULE_ID = 'herald-daily-maintenance';

/** The overdue-receipt reconciliation, every few minutes: likewise. */
export const RECEIPT_RECONCILIATION_SCHEDULE_ID = 'herald-receipt-reconciliation';
