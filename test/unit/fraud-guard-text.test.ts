/**
 * The fraud guard's text forms (`herald guard set`, `guard show`, the console): each parses to
 * the value its format prints back, bad forms are refused, and the two pure rules at their edges.
 */
import { describe, expect, it } from 'vitest';
import {
  breakerTrips,
  formatCountries,
  formatDuration,
  formatPrefixes,
  formatRangeBreaker,
  formatRequestRate,
  formatSendWindows,
  GUARD_DEFAULTS,
  parseCountries,
  parseDuration,
  parsePrefixes,
  parseRangeBreaker,
  parseRequestRate,
  parseSendWindows,
  type RangeBreaker,
  recipientWait,
} from '../../domain/fraud-guard.js';

describe('the defaults in their text forms', () => {
  it('print as the README and the issue write them', () => {
    expect(formatSendWindows(GUARD_DEFAULTS.otpPerRecipient)).toBe('5/15m,10/24h');
    expect(formatRangeBreaker(GUARD_DEFAULTS.rangeBreaker)).toBe('20/1h@10%,1h');
    expect(formatRequestRate(GUARD_DEFAULTS.keyRate)).toBe('100/s');
    expect(formatRequestRate(GUARD_DEFAULTS.workspaceRate)).toBe('300/s');
    expect(formatCountries(GUARD_DEFAULTS.otpCountries)).toBe('any');
    expect(formatPrefixes(GUARD_DEFAULTS.blockedPrefixes)).toBe('default');
  });
});

describe('durations', () => {
  it.each([
    ['30s', 30],
    ['90s', 90],
    ['15m', 900],
    ['1h', 3600],
    ['24h', 86_400],
    ['2d', 172_800],
  ])('%s is %i seconds and prints back the same', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
    expect(formatDuration(seconds)).toBe(text);
  });

  it('prints a duration in its largest whole unit, days from two on', () => {
    expect(formatDuration(60)).toBe('1m');
    expect(formatDuration(7200)).toBe('2h');
    expect(formatDuration(parseDuration('1d') as number)).toBe('24h');
    expect(formatDuration(parseDuration('60m') as number)).toBe('1h');
  });

  it.each(['0m', '15x', '15', 'm', '-1h', '1.5h', '1234567s', ''])('refuses "%s"', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('per-recipient windows', () => {
  it('round-trip, and off is no window', () => {
    expect(parseSendWindows('5/15m,10/24h')).toEqual([
      { sends: 5, seconds: 900 },
      { sends: 10, seconds: 86_400 },
    ]);
    expect(parseSendWindows(' 5/15m , 10/24h ')).toEqual(parseSendWindows('5/15m,10/24h'));
    expect(formatSendWindows(parseSendWindows('3/30s,50/7d') ?? [])).toBe('3/30s,50/7d');
    expect(parseSendWindows('off')).toEqual([]);
    expect(formatSendWindows([])).toBe('off');
  });

  it.each(['5/15x', '0/1h', '5', '5/', '/15m', '5/15m,', '5/15m;10/24h', 'five/15m', ''])(
    'refuses "%s"',
    (text) => {
      expect(parseSendWindows(text)).toBeUndefined();
    },
  );
});

describe('the range breaker', () => {
  it('round-trips, a fractional percentage too, and off', () => {
    expect(parseRangeBreaker('20/1h@10%,1h')).toEqual({
      sends: 20,
      seconds: 3600,
      verifiedPercent: 10,
      coolDownSeconds: 3600,
    });
    for (const text of ['20/1h@10%,1h', '3/30m@2.5%,6h', '100/2d@0%,15m', '1/1s@100%,1s'])
      expect(formatRangeBreaker(parseRangeBreaker(text) as RangeBreaker)).toBe(text);
    expect(parseRangeBreaker('off')).toBe('off');
    expect(formatRangeBreaker('off')).toBe('off');
  });

  it.each([
    '20/1h@101%,1h',
    '0/1h@10%,1h',
    '20/1x@10%,1h',
    '20/1h@10%,0m',
    '20/1h@10,1h',
    '20/1h@10%',
    '20/1h,1h',
    '20/1h@-1%,1h',
    '',
  ])('refuses "%s"', (text) => {
    expect(parseRangeBreaker(text)).toBeUndefined();
  });
});

describe('request rates', () => {
  it('round-trip per second and per minute, and off', () => {
    expect(parseRequestRate('100/s')).toEqual({ requests: 100, perSeconds: 1 });
    expect(parseRequestRate('6000/m')).toEqual({ requests: 6000, perSeconds: 60 });
    expect(formatRequestRate(parseRequestRate('6000/m') as 'off')).toBe('6000/m');
    expect(parseRequestRate('off')).toBe('off');
    expect(formatRequestRate('off')).toBe('off');
  });

  it.each(['0/s', '100/h', '100', '100/', '/s', '1.5/s', '12345678/s', '100/S', ''])(
    'refuses "%s"',
    (text) => {
      expect(parseRequestRate(text)).toBeUndefined();
    },
  );
});

describe('countries', () => {
  it('upper-cases, trims and drops repeats; any is any', () => {
    expect(parseCountries('au, nz,AU')).toEqual(['AU', 'NZ']);
    expect(formatCountries(parseCountries('AU,NZ') as string[])).toBe('AU,NZ');
    expect(parseCountries('ANY')).toBe('any');
    expect(formatCountries('any')).toBe('any');
  });

  it.each(['AU,XX', 'AUS', 'A', 'AU,', '61', ''])('refuses "%s"', (text) => {
    expect(parseCountries(text)).toBeUndefined();
  });
});

describe('blocked prefixes', () => {
  it('drops spaces and repeats, keeps default, and none is no prefix', () => {
    expect(parsePrefixes('+882, +44 70,default,+882')).toEqual(['+882', '+4470', 'default']);
    expect(formatPrefixes(parsePrefixes('+882,+883') as string[])).toBe('+882,+883');
    expect(parsePrefixes('none')).toEqual([]);
    expect(formatPrefixes([])).toBe('none');
  });

  it.each(['+0882', '882', '+', '+88a', '+1234567890123456', 'defaults', '+882,', ''])(
    'refuses "%s"',
    (text) => {
      expect(parsePrefixes(text)).toBeUndefined();
    },
  );
});

describe('recipientWait', () => {
  const windows = [
    { sends: 2, seconds: 100 },
    { sends: 3, seconds: 1000 },
  ];

  it('is 0 while every window has room', () => {
    expect(recipientWait(windows, [], 5000)).toBe(0);
    expect(recipientWait(windows, [4990], 5000)).toBe(0);
    expect(recipientWait([], [4999, 4998, 4997], 5000)).toBe(0);
  });

  it('waits until the oldest send that fills a window leaves it', () => {
    // Two sends within 100 s: the older (4950) leaves the short window at 5050.
    expect(recipientWait(windows, [4990, 4950], 5000)).toBe(50);
    // Three within 1000 s: the third newest (4100) leaves the long window at 5100.
    expect(recipientWait(windows, [4990, 4500, 4100], 5000)).toBe(100);
  });

  it('takes the longest wait of the windows, rounded up to a whole second', () => {
    expect(recipientWait(windows, [4999.5, 4950.2], 5000)).toBe(51);
    // The short window frees in 98 s, the long one (4001 + 1000) in 1 s: 98.
    expect(recipientWait(windows, [4999, 4998, 4001], 5000)).toBe(98);
  });

  it('no longer counts a send exactly a window old', () => {
    expect(recipientWait([{ sends: 1, seconds: 100 }], [4900], 5000)).toBe(0);
    expect(recipientWait([{ sends: 1, seconds: 100 }], [4900.001], 5000)).toBe(1);
  });
});

describe('breakerTrips', () => {
  const breaker = { sends: 20, seconds: 3600, verifiedPercent: 10, coolDownSeconds: 3600 };

  it('trips at the volume threshold while under the verified share', () => {
    expect(breakerTrips(breaker, 19, 0)).toBe(false);
    expect(breakerTrips(breaker, 20, 0)).toBe(true);
    expect(breakerTrips(breaker, 20, 1)).toBe(true);
    expect(breakerTrips(breaker, 1000, 99)).toBe(true);
  });

  it('stays open at exactly the verified share or above', () => {
    expect(breakerTrips(breaker, 20, 2)).toBe(false);
    expect(breakerTrips(breaker, 1000, 100)).toBe(false);
    expect(breakerTrips({ ...breaker, verifiedPercent: 2.5 }, 40, 1)).toBe(false);
    expect(breakerTrips({ ...breaker, verifiedPercent: 2.5 }, 41, 1)).toBe(true);
  });

  it('never trips at 0 %, and at 100 % trips on any unverified send once at volume', () => {
    expect(breakerTrips({ ...breaker, verifiedPercent: 0 }, 10_000, 0)).toBe(false);
    expect(breakerTrips({ ...breaker, verifiedPercent: 100 }, 20, 19)).toBe(true);
    expect(breakerTrips({ ...breaker, verifiedPercent: 100 }, 20, 20)).toBe(false);
  });
});
