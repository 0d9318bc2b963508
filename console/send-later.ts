/**
 * "Send later" on Quick Send and Create campaign: a date and time as a clock shows it (a
 * `datetime-local` field, `send_at`) in a time zone named beside it (`send_at_zone`, an IANA
 * name; console.js chooses the browser's, UTC without script). A named zone rather than a UTC
 * offset, so a time across a daylight-saving change is read with the offset of that day, not of
 * today. The result is the instant REST's `send_at` takes; the send's own rule (1 minute to 35
 * days ahead) is the use-case's.
 */
import { SCHEDULE_MAX_AHEAD_DAYS } from '../domain/campaign-status.js';

/** The zones offered: UTC first, then every zone this runtime knows. */
export const SEND_LATER_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone')];

/** `sendAt`: ISO 8601 (UTC), or undefined to send now. */
export type SendLater = { ok: true; sendAt: string | undefined } | { ok: false; error: string };

const DAY_AND_MORE_MS = 26 * 3_600_000;
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A formatter of wall-clock parts in `zone`; undefined for a zone the runtime does not know. */
function formatterOf(zone: string): Intl.DateTimeFormat | undefined {
  let formatter = formatters.get(zone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    } catch {
      return undefined;
    }
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** What a clock in the zone shows at `instant`, as milliseconds read as if it were UTC. */
function wallClockAt(formatter: Intl.DateTimeFormat, instant: number): number {
  const part: Record<string, number> = {};
  for (const { type, value } of formatter.formatToParts(instant)) part[type] = Number(value);
  return Date.UTC(
    part.year ?? 0,
    (part.month ?? 1) - 1,
    part.day ?? 1,
    part.hour ?? 0,
    part.minute ?? 0,
    part.second ?? 0,
  );
}

/**
 * The instant a clock in the zone shows `wall`; undefined when it never does (the hour skipped
 * when clocks go forward). A time shown twice (clocks going back) is its first showing.
 */
function instantOf(formatter: Intl.DateTimeFormat, wall: number): number | undefined {
  const offsetAt = (instant: number) => wallClockAt(formatter, instant) - instant;
  // The zone's offsets a day either side: one of them is the offset at `wall` (both, twice).
  const candidates = [
    wall - offsetAt(wall - DAY_AND_MORE_MS),
    wall - offsetAt(wall + DAY_AND_MORE_MS),
  ]
    .filter((instant) => wallClockAt(formatter, instant) === wall)
    .sort((a, b) => a - b);
  return candidates[0];
}

/** The form's two fields read: no date is "send now". */
export function readSendLater(localTime: string | undefined, zone: string | undefined): SendLater {
  const given = localTime?.trim() ?? '';
  if (given === '') return { ok: true, sendAt: undefined };
  const parts = LOCAL_TIME.exec(given);
  const [year, month, day, hour, minute] = (parts?.slice(1) ?? []).map(Number) as number[];
  const wall = parts
    ? Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1, hour ?? 0, minute ?? 0)
    : Number.NaN;
  // Date.UTC rolls 31 February into March: a date that does not read back is not one.
  if (Number.isNaN(wall) || new Date(wall).toISOString().slice(0, 16) !== given.replace(' ', 'T'))
    return { ok: false, error: 'Give the date and time as YYYY-MM-DD HH:MM.' };
  const zoneName = zone?.trim() ?? '';
  const formatter = zoneName === '' ? undefined : formatterOf(zoneName);
  if (!formatter) return { ok: false, error: 'Choose the time zone of the date and time.' };
  const instant = instantOf(formatter, wall);
  if (instant === undefined)
    return {
      ok: false,
      error: `${given.replace('T', ' ')} does not occur in ${zoneName}: the clocks go forward over it.`,
    };
  return { ok: true, sendAt: new Date(instant).toISOString() };
}

/** The field as views/send-later.eta shows it: the form's values again, and its errors. */
export function sendLaterField(
  id: string,
  form: { send_at?: string | undefined; send_at_zone?: string | undefined },
  errors: readonly string[],
) {
  return {
    id,
    value: form.send_at ?? '',
    zone: form.send_at_zone ?? '',
    errors,
    maxDays: SCHEDULE_MAX_AHEAD_DAYS,
  };
}
