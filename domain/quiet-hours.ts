/**
 * Quiet hours for marketing: a workspace's daily window (recipient's local time) in which
 * marketing messages may go out; outside it they wait for its next start. The recipient's zone is
 * derived from the number's country; for a country with several zones, the most westerly one (the
 * smallest standard UTC offset), whose clock is the latest: a message never goes out before the
 * window's start anywhere in the country. Pure: the zone data comes from `countries-and-timezones`
 * (maintained from the IANA database), local times from the runtime's Intl (full ICU).
 */
import { getCountry, getTimezone } from 'countries-and-timezones';
import { countryOf } from './phone.js';

/** Minutes after local midnight: marketing goes out in [start, end); start > end spans midnight. */
export interface QuietHours {
  start: number;
  end: number;
}

const MINUTES_PER_DAY = 24 * 60;
const MINUTE_MS = 60_000;
const DAY_MS = MINUTES_PER_DAY * MINUTE_MS;
const CLOCK = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;

export const QUIET_HOURS_FORMAT_ERROR =
  'must be a window of two 24-hour times, HH:MM-HH:MM (for example 09:00-20:00), or off';

function minutesOf(clock: string): number | undefined {
  const match = CLOCK.exec(clock);
  return match ? Number(match[1]) * 60 + Number(match[2]) : undefined;
}

/** `09:00-20:00` → the window; `off` → null; anything else (an empty window too) → undefined. */
export function parseQuietHours(text: string): QuietHours | null | undefined {
  const given = text.trim();
  if (given.toLowerCase() === 'off') return null;
  const [from, until, ...rest] = given.split('-').map((part) => part.trim());
  if (from === undefined || until === undefined || rest.length > 0) return undefined;
  const start = minutesOf(from);
  const end = minutesOf(until);
  if (start === undefined || end === undefined || start === end) return undefined;
  return { start, end };
}

const clockOf = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/** The window as the CLI and console write it: `09:00-20:00`. */
export function formatQuietHours(window: QuietHours): string {
  return `${clockOf(window.start)}-${clockOf(window.end)}`;
}

const zonesByCountry = new Map<string, string | undefined>();

/** The IANA zone of an ISO 3166 alpha-2 country: its most westerly one; undefined when unknown. */
export function zoneOfCountry(country: string): string | undefined {
  if (zonesByCountry.has(country)) return zonesByCountry.get(country);
  const zones = (getCountry(country)?.timezones ?? []).flatMap((name) => {
    const zone = getTimezone(name);
    return zone ? [{ name, offset: zone.utcOffset }] : [];
  });
  // Smallest standard offset first; equal offsets by name, so the choice never varies.
  zones.sort((a, b) => a.offset - b.offset || a.name.localeCompare(b.name));
  const zone = zones[0]?.name;
  zonesByCountry.set(country, zone);
  return zone;
}

/** The zone a number's recipient is taken to live in; undefined when its country has none. */
export function zoneOfNumber(e164: string): string | undefined {
  const country = countryOf(e164);
  return country === undefined ? undefined : zoneOfCountry(country);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

interface LocalTime {
  year: number;
  /** 1–12. */
  month: number;
  day: number;
  /** Minutes after local midnight. */
  minute: number;
  /** The wall clock read as if it were UTC, in ms: minus the instant, the zone's offset. */
  wallMs: number;
}

function localTime(zone: string, instantMs: number): LocalTime {
  const parts = Object.fromEntries(
    formatterFor(zone)
      .formatToParts(new Date(instantMs))
      .filter((part) => part.type !== 'literal')
      .map((part) => [part.type, Number(part.value)]),
  ) as Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>;
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    minute: parts.hour * 60 + parts.minute,
    wallMs: Date.UTC(
      parts.year,
      parts.month - 1,
      parts.day,
      parts.hour,
      parts.minute,
      parts.second,
    ),
  };
}

/** The zone's offset from UTC at an instant, in ms (whole seconds). */
function offsetAt(zone: string, instantMs: number): number {
  return localTime(zone, instantMs).wallMs - Math.floor(instantMs / 1000) * 1000;
}

function inWindow(window: QuietHours, minute: number): boolean {
  return window.start < window.end
    ? minute >= window.start && minute < window.end
    : minute >= window.start || minute < window.end;
}

/** Whether the local time in `zone` at `at` is inside the window. */
export function isWithin(window: QuietHours, zone: string, at: Date): boolean {
  return inWindow(window, localTime(zone, at.getTime()).minute);
}

/**
 * The first instant of a local date whose wall clock reads `minute` or later: that wall time,
 * or, when a clock change skipped it, the end of the skipped span. Of a wall time that happens
 * twice (clocks going back), the first.
 */
function firstInstantAtOrAfter(zone: string, date: Date, minute: number): number {
  const wall = date.getTime() + minute * MINUTE_MS;
  const before = wall - offsetAt(zone, wall - DAY_MS);
  const after = wall - offsetAt(zone, wall + DAY_MS);
  for (const candidate of [Math.min(before, after), Math.max(before, after)]) {
    const local = localTime(zone, candidate);
    if (local.wallMs === wall) return candidate;
  }
  // Skipped (clocks going forward): the change is between the two; find its minute.
  let skippedFrom = Math.min(before, after);
  let resumedAt = Math.max(before, after);
  while (resumedAt - skippedFrom > MINUTE_MS) {
    const middle = skippedFrom + Math.floor((resumedAt - skippedFrom) / 2 / MINUTE_MS) * MINUTE_MS;
    if (localTime(zone, middle).wallMs >= wall) resumedAt = middle;
    else skippedFrom = middle;
  }
  return resumedAt;
}

/**
 * When the window is next open for a recipient in `zone`: `at` itself when it is open now, else
 * the next time the local clock reaches the window's start (DST changes included).
 */
export function nextOpening(window: QuietHours, zone: string, at: Date): Date {
  const now = localTime(zone, at.getTime());
  if (inWindow(window, now.minute)) return at;
  for (let days = 0; days <= 2; days += 1) {
    const date = new Date(Date.UTC(now.year, now.month - 1, now.day + days));
    const opening = firstInstantAtOrAfter(zone, date, window.start);
    if (opening > at.getTime()) return new Date(opening);
  }
  throw new Error(`no opening of ${formatQuietHours(window)} in ${zone} after ${at.toISOString()}`);
}

/**
 * Until when a marketing message to `recipient` waits at `at`, or null: it may go now (inside the
 * window, or its country's zone is unknown: nothing to hold it by).
 */
export function heldUntil(window: QuietHours, recipient: string, at: Date): Date | null {
  const zone = zoneOfNumber(recipient);
  if (zone === undefined) return null;
  const opening = nextOpening(window, zone, at);
  return opening.getTime() > at.getTime() ? opening : null;
}
