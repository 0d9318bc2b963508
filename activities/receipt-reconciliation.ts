import { type DeliveryUpdate, recordDeliveries } from '../db/campaign-messages.js';
import type { Sql } from '../db/client.js';
import { findProviders } from '../db/providers.js';
import {
  type AwaitingReceipt,
  findAwaitingReceipts,
  markReceiptsChecked,
  type ReceiptWindows,
  recordNoReceipt,
} from '../db/receipt-reconciliation.js';
import { campaignMessageReference } from '../domain/message-reference.js';
import { OWN_PROVIDER_SLUG, ownProviderRecord } from '../domain/provider-definition.js';
import { adapterFor, type ProviderRegistryConfig } from '../providers/registry.js';
import type { DeliveryLookup, SmsProvider } from '../providers/types.js';
import { observeReceipt } from '../telemetry/metrics.js';

export type { ReceiptWindows };

export interface ReceiptReconciliationDeps extends ProviderRegistryConfig {
  sql: Sql;
}

export interface ReconcileReceiptsInput extends ReceiptWindows {
  batchSize: number;
}

export interface ReconciledReceipts {
  /** Messages asked about (or given up) in this batch: fewer than the batch size means the last. */
  examined: number;
  /** Given the status their provider reported. */
  settledByLookup: number;
  /** Given up as `unknown`. */
  givenUp: number;
}

/** Lookups in flight at once: the provider's API is asked, not flooded. */
const LOOKUPS_AT_ONCE = 8;

/**
 * The adapter of a message's provider, by workspace and slug; null when it is gone or unusable.
 * A disabled provider is still asked: its messages' receipts outlive the disable.
 */
async function adaptersFor(
  deps: ReceiptReconciliationDeps,
  messages: AwaitingReceipt[],
): Promise<Map<string, SmsProvider | null>> {
  const adapters = new Map<string, SmsProvider | null>();
  const slugsByWorkspace = new Map<number, Set<string>>();
  for (const { workspaceId, providerSlug } of messages) {
    const slugs = slugsByWorkspace.get(workspaceId) ?? new Set();
    slugsByWorkspace.set(workspaceId, slugs.add(providerSlug));
  }
  for (const [workspaceId, slugs] of slugsByWorkspace) {
    const stored = [...slugs].filter((slug) => slug !== OWN_PROVIDER_SLUG);
    const records = stored.length > 0 ? await findProviders(deps.sql, workspaceId, stored) : [];
    for (const slug of slugs) {
      const record =
        slug === OWN_PROVIDER_SLUG
          ? ownProviderRecord(workspaceId, deps.ownProviderUrl)
          : records.find((candidate) => candidate.slug === slug);
      let adapter: SmsProvider | null = null;
      try {
        adapter = record ? adapterFor(record, deps.secret, deps.smppSessions) : null;
      } catch {
        // A configuration it can no longer be built from: nobody to ask.
      }
      adapters.set(`${workspaceId}/${slug}`, adapter);
    }
  }
  return adapters;
}

/** What the provider says, or undefined when it cannot be asked or does not answer now. */
async function askProvider(
  provider: SmsProvider | null | undefined,
  message: AwaitingReceipt,
): Promise<DeliveryLookup | undefined> {
  if (!provider?.deliveryStatus || message.providerMessageId === null) return undefined;
  return provider
    .deliveryStatus({
      providerMessageId: message.providerMessageId,
      reference: campaignMessageReference(message.campaignId, message.seq),
    })
    .catch(() => undefined);
}

/** Runs `task` over `items`, `atOnce` at a time; results in the items' order. */
async function inTurns<T, R>(items: T[], atOnce: number, task: (item: T) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
  return results;
}

export function createReceiptReconciliationActivities(deps: ReceiptReconciliationDeps) {
  return {
    /**
     * One batch of messages whose receipt is overdue: each is looked up at its provider where the
     * provider has a status lookup, and given the final status it reports through the receipts'
     * own latest-wins rules; one still without a final status past the give-up window (or whose
     * provider cannot be asked) is given up as `unknown`; the rest are asked again later. A
     * receipt arriving meanwhile is never overwritten by an older status or by the give-up.
     */
    async reconcileAwaitingReceipts(input: ReconcileReceiptsInput): Promise<ReconciledReceipts> {
      const messages = await findAwaitingReceipts(deps.sql, input, input.batchSize);
      if (messages.length === 0) return { examined: 0, settledByLookup: 0, givenUp: 0 };
      const adapters = await adaptersFor(deps, messages);
      const answers = await inTurns(messages, LOOKUPS_AT_ONCE, (message) =>
        askProvider(adapters.get(`${message.workspaceId}/${message.providerSlug}`), message),
      );
      const settled: DeliveryUpdate[] = [];
      const givenUp: AwaitingReceipt[] = [];
      const askAgain: AwaitingReceipt[] = [];
      for (const [index, message] of messages.entries()) {
        const answer = answers[index];
        if (answer?.kind === 'final' && message.providerMessageId !== null)
          settled.push({
            campaignId: message.campaignId,
            seq: message.seq,
            provider: message.providerSlug,
            providerMessageId: message.providerMessageId,
            status: answer.status,
            errorCode: answer.errorCode,
            at: answer.at,
          });
        else if (message.overdue) givenUp.push(message);
        else askAgain.push(message);
      }
      const recorded = await recordDeliveries(deps.sql, settled);
      for (const [index, update] of settled.entries()) {
        const receipt = recorded[index];
        if (receipt) observeReceipt(update.status, receipt);
      }
      // A lookup that lost to a receipt written meanwhile leaves the message receipted all the same.
      const settledByLookup = recorded.filter((receipt) => receipt.kept).length;
      const given = await recordNoReceipt(deps.sql, givenUp);
      await markReceiptsChecked(deps.sql, askAgain);
      return { examined: messages.length, settledByLookup, givenUp: given };
    },
  };
}
