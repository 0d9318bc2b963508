import { describe, expect, it } from 'vitest';
import {
  formatQuietHours,
  heldUntil,
  isWithin,
  nextOpening,
  parseQuietHours,
  zoneOfCountry,
  zoneOfNumber,
} from '../../domain/quiet-hours.js';

const NINE_TO_EIGHT = { start: 9 * 60, end: 20 * 60 };
const at = (iso: string) => new Date(iso);

describe('quiet hours setting', () => {
  it.each([
    ['09:00-20:00', { start: 540, end: 1200 }],
    [' 08:30 - 21:15 ', { start: 510, end: 1275 }],
    ['22:00-06:00', { start: 1320, end: 360 }],
    ['00:00-23:59', { start: 0, end: 1439 }],
  ])('reads %j', (text, window) => {
    expect(parseQuietHours(text)).toEqual(window);
  });

  it('reads off as no window', () => {
    expect(parseQuietHours('OFF')).toBeNull();
  });

  it.each([
    '',
    '9:00-20:00',
    '09:00',
    '09:00-24:00',
    '09:60-20:00',
    '09:00-09:00',
    '09:00-20:00-21:00',
    'on',
  ])('refuses %j', (text) => {
    expect(parseQuietHours(text)).toBeUndefined();
  });

  it('writes a window back as it is read', () => {
    expect(formatQuietHours({ start: 540, end: 1200 })).toBe('09:00-20:00');
    expect(formatQuietHours({ start: 1320, end: 5 })).toBe('22:00-00:05');
  });
});

describe("a recipient's zone", () => {
  it.each([
    ['FR', 'Europe/Paris'],
    ['GB', 'Europe/London'],
    // Several zones: the most westerly, by smallest standard offset (not by name or list order).
    ['AU', 'Australia/Perth'],
    ['US', 'America/Adak'],
    ['BR', 'America/Eirunepe'],
    ['RU', 'Europe/Kaliningrad'],
    // Across the date line: Tarawa (+12) is west of Kanton (+13) and Kiritimati (+14).
    ['KI', 'Pacific/Tarawa'],
  ])('of %s is %s', (country, zone) => {
    expect(zoneOfCountry(country)).toBe(zone);
  });

  it('is unknown for a country code with no zone', () => {
    expect(zoneOfCountry('ZZ')).toBeUndefined();
  });

  it("comes from the number's country", () => {
    expect(zoneOfNumber('+61412345678')).toBe('Australia/Perth');
    expect(zoneOfNumber('+33612345678')).toBe('Europe/Paris');
    expect(zoneOfNumber('+12025550123')).toBe('America/Adak');
  });
});

describe('the window', () => {
  it('is open from its start up to, not including, its end', () => {
    // Paris is UTC+1 in January.
    expect(isWithin(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T07:59:00Z'))).toBe(false);
    expect(isWithin(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T08:00:00Z'))).toBe(true);
    expect(isWithin(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T18:59:59Z'))).toBe(true);
    expect(isWithin(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T19:00:00Z'))).toBe(false);
  });

  it('follows summer time', () => {
    // Paris is UTC+2 in July: 07:30Z is 09:30 there.
    expect(isWithin(NINE_TO_EIGHT, 'Europe/Paris', at('2026-07-15T07:30:00Z'))).toBe(true);
    expect(isWithin(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T07:30:00Z'))).toBe(false);
  });

  it('may span midnight', () => {
    const nights = { start: 22 * 60, end: 6 * 60 };
    expect(isWithin(nights, 'UTC', at('2026-01-15T23:00:00Z'))).toBe(true);
    expect(isWithin(nights, 'UTC', at('2026-01-15T05:59:00Z'))).toBe(true);
    expect(isWithin(nights, 'UTC', at('2026-01-15T12:00:00Z'))).toBe(false);
    expect(nextOpening(nights, 'UTC', at('2026-01-15T12:00:00Z'))).toEqual(
      at('2026-01-15T22:00:00Z'),
    );
  });
});

describe('the next opening', () => {
  it('is now while the window is open', () => {
    const now = at('2026-01-15T12:34:56.789Z');
    expect(nextOpening(NINE_TO_EIGHT, 'Europe/Paris', now)).toBe(now);
  });

  it('is later the same day before the start', () => {
    expect(nextOpening(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T05:00:00Z'))).toEqual(
      at('2026-01-15T08:00:00Z'),
    );
  });

  it('is the next day after the end', () => {
    expect(nextOpening(NINE_TO_EIGHT, 'Europe/Paris', at('2026-01-15T21:00:00Z'))).toEqual(
      at('2026-01-16T08:00:00Z'),
    );
  });

  it('is across the local date, not the UTC one', () => {
    // 23:00Z on the 15th is already 07:00 on the 16th in Perth (UTC+8): it opens at 09:00 there.
    expect(nextOpening(NINE_TO_EIGHT, 'Australia/Perth', at('2026-01-15T23:00:00Z'))).toEqual(
      at('2026-01-16T01:00:00Z'),
    );
  });

  it('moves an hour with clocks going forward overnight', () => {
    // London goes from GMT to BST at 01:00Z on 29 March 2026: 09:00 is 08:00Z that day.
    expect(nextOpening(NINE_TO_EIGHT, 'Europe/London', at('2026-03-28T21:00:00Z'))).toEqual(
      at('2026-03-29T08:00:00Z'),
    );
  });

  it('moves an hour with clocks going back overnight', () => {
    // London goes back to GMT at 01:00Z on 25 October 2026: 09:00 is 09:00Z that day.
    expect(nextOpening(NINE_TO_EIGHT, 'Europe/London', at('2026-10-24T20:00:00Z'))).toEqual(
      at('2026-10-25T09:00:00Z'),
    );
  });

  it('is the end of the skipped hour when the start falls inside it', () => {
    // 01:30 does not happen in London on 29 March 2026: the clock reads 02:00 BST at 01:00Z.
    const window = { start: 90, end: 20 * 60 };
    expect(nextOpening(window, 'Europe/London', at('2026-03-29T00:10:00Z'))).toEqual(
      at('2026-03-29T01:00:00Z'),
    );
  });

  it('is the first of the two when the start happens twice', () => {
    // 01:30 happens at 00:30Z (BST) and 01:30Z (GMT) in London on 25 October 2026.
    const window = { start: 90, end: 20 * 60 };
    expect(nextOpening(window, 'Europe/London', at('2026-10-25T00:10:00Z'))).toEqual(
      at('2026-10-25T00:30:00Z'),
    );
  });
});

describe('holding a marketing message', () => {
  // 2026-01-15T06:00Z: 07:00 in Paris (outside), 14:00 in Perth (inside).
  const now = at('2026-01-15T06:00:00Z');

  it('does not hold a number whose local time is inside the window', () => {
    expect(heldUntil(NINE_TO_EIGHT, '+61412345678', now)).toBeNull();
  });

  it('holds a number whose local time is outside it until it opens there', () => {
    expect(heldUntil(NINE_TO_EIGHT, '+33612345678', now)).toEqual(at('2026-01-15T08:00:00Z'));
  });

  it('does not hold a number whose country has no zone to go by', () => {
    // +800: international freephone, no country.
    expect(heldUntil(NINE_TO_EIGHT, '+80012345678', now)).toBeNull();
  });
});
