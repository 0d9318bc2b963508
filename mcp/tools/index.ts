import type { z } from 'zod';
import { getCampaignReport } from './get-campaign-report.js';
import { getCompletedCampaignSummary } from './get-completed-campaign-summary.js';
import { getDeliverySummary } from './get-delivery-summary.js';
import { getQuickSendReport } from './get-quick-send-report.js';
import { getTeamStatistics } from './get-team-statistics.js';
import { listRecentCampaigns } from './list-recent-campaigns.js';
import { listRecentQuickSends } from './list-recent-quick-sends.js';
import type { HeraldTool } from './tool.js';

/** The read-only reporting tools of docs/spec.md §4.5, in the order the spec lists them. */
export const tools: readonly HeraldTool<z.ZodRawShape, z.ZodRawShape>[] = [
  listRecentCampaigns,
  getCampaignReport,
  getDeliverySummary,
  getCompletedCampaignSummary,
  listRecentQuickSends,
  getQuickSendReport,
  getTeamStatistics,
];
