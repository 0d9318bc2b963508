/**
 * Send later's date and time, read in the time zone named beside it (console/send-later.ts): the
 * offset of that day, not of today; a time the clocks skip refused; one they show twice read as
 * its first showing; a date that does not exist, or a zone the runtime does not know, refused.
 */
import { describe, expect, it } from 'vitest';
import { readSendLater, SEND_LATER_ZONES } from '../../console/send-later.js';

describe('readSendLater', () => {
  it.each([
    ['2026-12-01T09:30', 'Australia/Sydney', '2026-11-30T22:30:00.000Z'], // +11:00 in summer
    ['2026-07-01T09:30', 'Australia/Sydney', '2026-06-30T23:30:00.000Z'], // +10:00 in winter
    ['2026-07-01T12:00', 'Europe/London', '2026-07-01T11:00:00.000Z'],
    ['2026-12-01 09:30', 'Asia/Kolkata', '2026-12-01T04:00:00.000Z'],
    ['2026-12-01T09:30', 'UTC', '2026-12-01T09:30:00.000Z'],
    // Shown twice (clocks go back): the first showing, before the change.
    ['2026-11-01T01:30', 'America/New_York', '2026-11-01T05:30:00.000Z'],
    ['2026-04-05T02:30', 'Australia/Sydney', '2026-04-04T15:30:00.000Z'],
  ])('reads %s in %s as %s', (localTime, zone, instant) => {
    expect(readSendLater(localTime, zone)).toEqual({ ok: true, sendAt: instant });
  });

  it('sends now without a date, whatever the zone', () => {
    expect(readSendLater('', 'Australia/Sydney')).toEqual({ ok: true, sendAt: undefined });
    expect(readSendLater(undefined, undefined)).toEqual({ ok: true, sendAt: undefined });
  });

  it.each([
    [
      '2026-03-08T02:30',
      'America/New_York',
      '2026-03-08 02:30 does not occur in America/New_York: the clocks go forward over it.',
    ],
    [
      '2026-10-04T02:30',
      'Australia/Sydney',
      '2026-10-04 02:30 does not occur in Australia/Sydney: the clocks go forward over it.',
    ],
    ['2026-02-31T10:00', 'UTC', 'Give the date and time as YYYY-MM-DD HH:MM.'],
    ['tomorrow', 'UTC', 'Give the date and time as YYYY-MM-DD HH:MM.'],
    ['2026-12-01T09:30', 'Mars/Olympus', 'Choose the time zone of the date and time.'],
    ['2026-12-01T09:30', '', 'Choose the time zone of the date and time.'],
  ])('refuses %s in %j', (localTime, zone, error) => {
    expect(readSendLater(localTime, zone)).toEqual({ ok: false, error });
  });

  it('offers UTC first, then every zone the runtime knows', () => {
    expect(SEND_LATER_ZONES[0]).toBe('UTC');
    expect(SEND_LATER_ZONES).toContain('Australia/Sydney');
    expect(SEND_LATER_ZONES.length).toBeGreaterThan(300);
  });
});
