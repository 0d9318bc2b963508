/**
 * What the receipt endpoint keeps per process, made once by the composition root and handed in
 * with the deps (so a test, or a second app in one process, gets its own): the workspaces of the
 * campaigns whose receipts arrive, and the writer that puts receipts arriving together into one
 * statement.
 */
import {
  type DeliveryUpdate,
  type RecordedReceipt,
  recordDeliveries,
} from '../../db/campaign-messages.js';
import type { Sql } from '../../db/client.js';
import { coalescedWrites } from '../../db/coalesced-writes.js';

/** Campaigns whose workspace a process remembers: more than are ever sending at once. */
const REMEMBERED_CAMPAIGNS = 10_000;
/** Most receipts one statement carries: a few milliseconds of work for Postgres. */
const RECEIPTS_PER_STATEMENT = 500;

export interface ReceiptCaches {
  /** A campaign's workspace never changes and its receipts come by the thousand. */
  campaignWorkspace(campaignId: number): number | undefined;
  rememberCampaignWorkspace(campaignId: number, workspaceId: number): void;
  /**
   * One delivery receipt, written together with the others arriving meanwhile: a provider posts
   * them by the thousand a second, and each statement updates its campaign's report row and the
   * workspace's report minute (0004's trigger), which one-by-one writers queue for.
   */
  recordDelivery(update: DeliveryUpdate): Promise<RecordedReceipt>;
}

export function createReceiptCaches(sql: Sql): ReceiptCaches {
  const workspaces = new Map<number, number>();
  return {
    campaignWorkspace: (campaignId) => workspaces.get(campaignId),
    rememberCampaignWorkspace(campaignId, workspaceId) {
      // The oldest is forgotten first (a Map iterates in insertion order).
      if (workspaces.size >= REMEMBERED_CAMPAIGNS)
        workspaces.delete(workspaces.keys().next().value as number);
      workspaces.set(campaignId, workspaceId);
    },
    recordDelivery: coalescedWrites((updates: DeliveryUpdate[]) => recordDeliveries(sql, updates), {
      max: RECEIPTS_PER_STATEMENT,
    }),
  };
}
