/**
 * Where a batch's messages stand, as parts that add up to its recipients: delivered, undelivered,
 * status unknown, failed to send, awaiting a receipt, and not sent (yet, or canceled). Each part
 * carries its share and offset in percent, for a bar drawn without script.
 */

export const OUTCOMES = [
  { outcome: 'delivered', label: 'Delivered' },
  { outcome: 'undelivered', label: 'Undelivered' },
  { outcome: 'unknown', label: 'Status unknown' },
  { outcome: 'failed', label: 'Failed to send' },
  { outcome: 'awaiting', label: 'Awaiting receipt' },
  { outcome: 'unsent', label: 'Not sent' },
] as const;

export type Outcome = (typeof OUTCOMES)[number]['outcome'];

export interface BreakdownPart {
  outcome: Outcome;
  label: string;
  count: number;
  /** Percent of the total where the part starts, and its width. */
  offset: number;
  share: number;
}

export interface DeliveryBreakdown {
  total: number;
  /** Every outcome, in OUTCOMES order, zeros included. */
  parts: BreakdownPart[];
  /** In words, for a screen reader: "20 messages: 18 delivered, 2 awaiting receipt". */
  summary: string;
}

/** A batch's counts as the reporting row has them (db/reporting.ts ReportBatch). */
export interface BatchCounts {
  recipients: number;
  sent: number;
  failedToSend: number;
  delivered: number;
  deliveryFailed: number;
  deliveryUnknown: number;
}

/**
 * Sent messages still without a receipt, as the MCP reports count them
 * (mcp/tools/batch-fields.ts): an `unknown` receipt is not awaited.
 */
export function awaitingReceipt(batch: BatchCounts): number {
  return Math.max(0, batch.sent - batch.delivered - batch.deliveryFailed - batch.deliveryUnknown);
}

export function deliveryBreakdown(batch: BatchCounts): DeliveryBreakdown {
  const awaiting = awaitingReceipt(batch);
  const counts: Record<Outcome, number> = {
    delivered: batch.delivered,
    undelivered: batch.deliveryFailed,
    unknown: batch.deliveryUnknown,
    failed: batch.failedToSend,
    awaiting,
    unsent: Math.max(0, batch.recipients - batch.sent - batch.failedToSend),
  };
  return stacked(counts);
}

/** Parts of `counts` laid end to end, each its share of their sum. */
export function stacked(counts: Record<Outcome, number>): DeliveryBreakdown {
  const total = OUTCOMES.reduce((sum, { outcome }) => sum + counts[outcome], 0);
  let offset = 0;
  const parts = OUTCOMES.map(({ outcome, label }) => {
    const share = total === 0 ? 0 : round((counts[outcome] * 100) / total);
    const part = { outcome, label, count: counts[outcome], offset: round(offset), share };
    offset += share;
    return part;
  });
  const named = parts
    .filter((part) => part.count > 0)
    .map((part) => `${part.count.toLocaleString('en-US')} ${part.label.toLowerCase()}`);
  const messages = `${total.toLocaleString('en-US')} message${total === 1 ? '' : 's'}`;
  return {
    total,
    parts,
    summary: named.length > 0 ? `${messages}: ${named.join(', ')}` : messages,
  };
}

const round = (value: number) => Math.round(value * 100) / 100;
