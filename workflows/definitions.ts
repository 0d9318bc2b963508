import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Shared by the api, the worker and workflows: the task queue, ids and search attributes. */

export const TASK_QUEUE = 'herald';

export const searchAttributes = {
  workspaceId: defineSearchAttributeKey('HeraldWorkspaceId', SearchAttributeType.KEYWORD),
  kind: defineSearchAttributeKey('HeraldKind', SearchAttributeType.KEYWORD),
  campaignId: defineSearchAttributeKey('HeraldCampaignId', SearchAttributeType.INT),
  status: defineSearchAttributeKey('HeraldStatus', SearchAttributeType.KEYWORD),
} as const;

export type WorkflowKind = 'campaign' | 'otp' | 'cleanup' | 'webhook';

/** The daily maintenance run: one fixed schedule id, created or updated at worker start-up. */
export const MAINTENANCE_SCHEDULE_ID = 'herald-daily-maintenance';
