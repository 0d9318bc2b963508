import { SegmentedMessage } from 'sms-segments-calculator';
import { describe, expect, it } from 'vitest';
import { countSegments } from '../../domain/segments.js';

/** Pieces that exercise every rule: GSM-7 basic and extension, UCS-2, surrogate pairs, ZWJ emoji, flags, CR LF. */
const PIECES = [
  'a',
  'Z',
  ' ',
  '@',
  '€',
  '^',
  '{',
  '\r\n',
  '\n',
  'é',
  'ç',
  'ж',
  '中',
  '😀',
  '👨‍👩‍👧',
  '🇫🇷',
  'e\u0301',
];

/** A deterministic generator, so that a failure names a reproducible text. */
function seededRandom(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('countSegments', () => {
  it('agrees with Twilio’s calculator on 1,000 random texts around every part boundary', () => {
    const random = seededRandom(20261123);
    for (let trial = 0; trial < 1_000; trial += 1) {
      const gsmOnly = trial % 2 === 0;
      const pieces = gsmOnly ? PIECES.slice(0, 9) : PIECES;
      const length = Math.floor(random() * 700);
      let text = '';
      while (text.length < length) text += pieces[Math.floor(random() * pieces.length)];
      const reference = new SegmentedMessage(text, 'auto');
      expect(countSegments(text), JSON.stringify(text)).toEqual({
        encoding: reference.encodingName,
        segments: reference.segmentsCount,
      });
    }
  }, 30_000);

  it.each([
    ['a'.repeat(160), 'GSM-7', 1],
    ['a'.repeat(161), 'GSM-7', 2],
    ['€'.repeat(80), 'GSM-7', 1],
    [`${'a'.repeat(159)}€`, 'GSM-7', 2],
    ['ж'.repeat(70), 'UCS-2', 1],
    ['ж'.repeat(71), 'UCS-2', 2],
    ['', 'GSM-7', 1],
  ])('counts %j as %s in %i segment(s)', (text, encoding, segments) => {
    expect(countSegments(text)).toEqual({ encoding, segments });
  });

  it('counts a million characters in linear time (the calculator’s split is quadratic)', () => {
    expect(countSegments('a'.repeat(1_000_000))).toEqual({ encoding: 'GSM-7', segments: 6_536 });
    expect(countSegments('ж'.repeat(1_000_000))).toEqual({ encoding: 'UCS-2', segments: 14_926 });
  });
});
