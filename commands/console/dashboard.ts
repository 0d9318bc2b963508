/** The console dashboard: balance, delivery summaries (as get_delivery_summary), daily chart, recent batches. */
import { dailyDelivery, workspaceCreditBalance } from '../../db/console-reports.js';
import { listRecentBatches, type ReportBatch, sumDeliveryHistory } from '../../db/reporting.js';
import { shownRatePercent } from '../../domain/delivery-rate.js';
import type { CommandDeps } from '../deps.js';
import { type ListedBatch, listed } from './batches.js';

type Deps = Pick<CommandDeps, 'sql'>;

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export type { ReportBatch };

export interface DeliverySummary {
  days: number;
  sent: number;
  delivered: number;
  failed: number;
  awaiting: number;
  /** `unknown` receipts: counted in neither delivered, failed nor awaiting. */
  unknown: number;
  /** Null until something was sent (shown `–`). */
  deliveryRatePercent: number | null;
}

/**
 * The rolling totals get_delivery_summary reports (mcp/tools/get-delivery-summary.ts): history
 * from the minute `days` ago to now, each event by its own timestamp, and its rate (one formula,
 * domain/delivery-rate.ts).
 */
export async function deliverySummary(
  deps: Deps,
  workspaceId: number,
  days: 7 | 30,
  now = new Date(),
): Promise<DeliverySummary> {
  const from = new Date(Math.floor((now.getTime() - days * DAY_MS) / MINUTE_MS) * MINUTE_MS);
  const totals = await sumDeliveryHistory(deps.sql, workspaceId, from, now);
  const sent = Number(totals.sent);
  const delivered = Number(totals.delivered);
  return {
    days,
    sent,
    delivered,
    failed: Number(totals.failed),
    awaiting: Number(totals.awaiting),
    unknown: Number(totals.unknown),
    deliveryRatePercent: shownRatePercent(delivered, sent),
  };
}

export interface Dashboard {
  balance: number;
  week: DeliverySummary;
  month: DeliverySummary;
  /**
   * Every day of the last 30, zeros included: epoch seconds and counts. Each message once, on the
   * day of its outcome (delivered, failed, unknown), or while awaiting on the day it was sent.
   */
  chart: DailyCounts;
  recent: ListedBatch[];
}

export interface DailyCounts {
  days: number[];
  sent: number[];
  delivered: number[];
  /** Failed to send, or undelivered by receipt. */
  failed: number[];
  unknown: number[];
  awaiting: number[];
}

export async function loadDashboard(
  deps: Deps,
  workspaceId: number,
  now = new Date(),
): Promise<Dashboard> {
  const firstDay = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - 29 * DAY_MS);
  const [balance, week, month, daily, recent] = await Promise.all([
    workspaceCreditBalance(deps.sql, workspaceId),
    deliverySummary(deps, workspaceId, 7, now),
    deliverySummary(deps, workspaceId, 30, now),
    dailyDelivery(deps.sql, workspaceId, firstDay),
    listRecentBatches(deps.sql, workspaceId, undefined, 10),
  ]);
  const byDay = new Map(daily.map((row) => [row.day.getTime(), row]));
  const chart: DailyCounts = {
    days: [],
    sent: [],
    delivered: [],
    failed: [],
    unknown: [],
    awaiting: [],
  };
  for (let day = firstDay.getTime(); day <= now.getTime(); day += DAY_MS) {
    const row = byDay.get(day);
    chart.days.push(day / 1000);
    chart.sent.push(row?.sent ?? 0);
    chart.delivered.push(row?.delivered ?? 0);
    chart.failed.push(row?.failed ?? 0);
    chart.unknown.push(row?.unknown ?? 0);
    chart.awaiting.push(row?.awaiting ?? 0);
  }
  return { balance, week, month, chart, recent: await listed(deps, recent) };
}

/** The latest batches of every kind, newest first (the dashboard's table, polled while running). */
export async function listLatestBatches(
  deps: Deps,
  workspaceId: number,
  limit = 10,
): Promise<ListedBatch[]> {
  return listed(deps, await listRecentBatches(deps.sql, workspaceId, undefined, limit));
}
