/**
 * The OTP conversion chart, drawn on the server as SVG (CSP: no script needed, no style
 * attribute; colours come from console.css by class): one stacked bar per UTC day of the window,
 * what became of that day's codes, its height the codes sent.
 */
import type { OtpActivityDay } from '../commands/otp/activity.js';

/** Bottom to top: the fates a day's sends split into, each with its class and legend label. */
export const OTP_CHART_SERIES = [
  { key: 'verified', label: 'Verified' },
  { key: 'expired', label: 'Expired unverified' },
  { key: 'exhausted', label: 'Attempts used up' },
  { key: 'failed', label: 'Failed to send' },
  { key: 'open', label: 'Open or not sent yet' },
] as const;

type SeriesKey = (typeof OTP_CHART_SERIES)[number]['key'];

export interface OtpChart {
  width: number;
  height: number;
  bars: {
    x: number;
    width: number;
    /** For the bar's <title>: the day and its figures in words. */
    title: string;
    segments: { key: SeriesKey; y: number; height: number }[];
  }[];
  /** Every seventh day's date under the axis. */
  labels: { x: number; text: string }[];
  maxSent: number;
}

const WIDTH = 600;
const HEIGHT = 160;
const LABEL_SPACE = 16;

/** The last `days` UTC days up to `today`, oldest first (days without a send are zeros). */
function dayKeys(days: number, today: Date): string[] {
  return Array.from({ length: days }, (_, index) => {
    const day = new Date(today);
    day.setUTCDate(day.getUTCDate() - (days - 1 - index));
    return day.toISOString().slice(0, 10);
  });
}

export function otpConversionChart(
  byDay: (OtpActivityDay & { conversionPercent: number | null })[],
  days: number,
  today = new Date(),
): OtpChart {
  const found = new Map(byDay.map((day) => [day.day, day]));
  const keys = dayKeys(days, today);
  const maxSent = Math.max(1, ...byDay.map((day) => day.sent));
  const slot = WIDTH / keys.length;
  const plot = HEIGHT - LABEL_SPACE;
  const bars = keys.map((key, index) => {
    const day = found.get(key);
    const parts: Record<SeriesKey, number> = {
      verified: day?.verified ?? 0,
      expired: day?.expired ?? 0,
      exhausted: day?.exhausted ?? 0,
      failed: day?.failed ?? 0,
      open: 0,
    };
    parts.open = Math.max(
      0,
      (day?.sent ?? 0) - parts.verified - parts.expired - parts.exhausted - parts.failed,
    );
    let top = plot;
    const segments = OTP_CHART_SERIES.flatMap(({ key: series }) => {
      const height = (parts[series] / maxSent) * plot;
      if (height === 0) return [];
      top -= height;
      return [{ key: series, y: round(top), height: round(height) }];
    });
    const rate = day?.conversionPercent == null ? '–' : `${day.conversionPercent}%`;
    return {
      x: round(index * slot + slot * 0.15),
      width: round(slot * 0.7),
      title: `${key}: ${day?.sent ?? 0} sent, ${parts.verified} verified, ${parts.expired} expired, ${parts.exhausted} attempts used up, ${parts.failed} failed to send; conversion ${rate}`,
      segments,
    };
  });
  const labels = keys.flatMap((key, index) =>
    (keys.length - 1 - index) % 7 === 0
      ? [{ x: round(index * slot + slot / 2), text: key.slice(5) }]
      : [],
  );
  return { width: WIDTH, height: HEIGHT, bars, labels, maxSent };
}

const round = (value: number) => Math.round(value * 10) / 10;
