/**
 * The dashboard's daily chart as stacked bars drawn on the server (an SVG: no script, and the
 * console's CSP allows SVG geometry attributes where it forbids style attributes). Each message
 * is counted once, on the day of its outcome, so the parts of a bar add up.
 */
import type { DailyCounts } from '../commands/console/dashboard.js';

export const DAILY_PARTS = [
  { key: 'delivered', label: 'Delivered' },
  { key: 'failed', label: 'Failed or undelivered' },
  { key: 'unknown', label: 'Status unknown' },
  { key: 'awaiting', label: 'Awaiting receipt' },
] as const;

type PartKey = (typeof DAILY_PARTS)[number]['key'];

/** Units of the SVG's viewBox: a day's slot, and the plot's height. */
const SLOT = 10;
const HEIGHT = 100;

export interface DailyBar {
  /** `2026-11-27` (UTC). */
  day: string;
  x: number;
  total: number;
  parts: { key: PartKey; count: number; y: number; height: number }[];
  /** For the bar's <title>: the day and its counts in words. */
  title: string;
}

export interface DailyBars {
  width: number;
  height: number;
  /** The tallest day, the top of the scale. */
  max: number;
  bars: DailyBar[];
  /** Totals over the period per part, for the legend. */
  totals: { key: PartKey; label: string; count: number }[];
  /** The chart in words (its text alternative). */
  summary: string;
}

const number = (value: number) => value.toLocaleString('en-US');

export function dailyBars(chart: DailyCounts): DailyBars {
  const totalOf = (index: number) =>
    DAILY_PARTS.reduce((sum, { key }) => sum + (chart[key][index] ?? 0), 0);
  const max = Math.max(0, ...chart.days.map((_, index) => totalOf(index)));
  const bars = chart.days.map((seconds, index) => {
    const day = new Date(seconds * 1000).toISOString().slice(0, 10);
    let top = HEIGHT;
    const parts = DAILY_PARTS.map(({ key }) => {
      const count = chart[key][index] ?? 0;
      const height = max === 0 ? 0 : Math.round(((count * HEIGHT) / max) * 100) / 100;
      top -= height;
      return { key, count, y: Math.round(top * 100) / 100, height };
    });
    const words = DAILY_PARTS.map(
      ({ label }, part) => `${number(parts[part]?.count ?? 0)} ${label.toLowerCase()}`,
    ).join(', ');
    return { day, x: index * SLOT + 1, total: totalOf(index), parts, title: `${day}: ${words}` };
  });
  const totals = DAILY_PARTS.map(({ key, label }) => ({
    key,
    label,
    count: chart[key].reduce((sum, value) => sum + value, 0),
  }));
  const busiest = bars.reduce<DailyBar | undefined>(
    (best, bar) => (bar.total > (best?.total ?? 0) ? bar : best),
    undefined,
  );
  const summary = `Messages per day over the last ${bars.length} days: ${totals
    .map(({ label, count }) => `${number(count)} ${label.toLowerCase()}`)
    .join(
      ', ',
    )}${busiest ? `; the busiest day ${busiest.day} with ${number(busiest.total)}` : ''}.`;
  return { width: bars.length * SLOT, height: HEIGHT, max, bars, totals, summary };
}
