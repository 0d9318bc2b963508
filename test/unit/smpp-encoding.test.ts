/**
 * SMPP short messages (providers/smpp/encoding.ts): GSM-7 or UCS-2 as Twilio's calculator
 * behind countSegments decides, unpacked GSM 03.38 septets, UTF-16BE, and the split into
 * concatenated parts behind an 8-bit-reference UDH.
 */
import { describe, expect, it } from 'vitest';
import { countSegments } from '../../domain/segments.js';
import {
  chooseEncoding,
  decodeGsm7,
  decodeUcs2,
  encodeGsm7,
  encodeSms,
  gsmSeptets,
} from '../../providers/smpp/encoding.js';

const udhOf = (part: Buffer) => [...part.subarray(0, 6)];
const bodyOf = (part: Buffer) => part.subarray(6);

describe('encoding choice', () => {
  it('uses GSM-7 for the default alphabet and its extension table, UCS-2 otherwise', () => {
    expect(chooseEncoding('Hello @ £$¥ èéùìò Ç Øø Åå ΔΦΓΛΩΠΨΣΘΞ ÆæßÉ ¡¿ ÄÖÑÜ§ äöñüà')).toBe(
      'GSM-7',
    );
    expect(chooseEncoding('{braces} [brackets] ~ | ^ \\ € \f')).toBe('GSM-7');
    expect(chooseEncoding('ç')).toBe('UCS-2');
    expect(chooseEncoding('smart ’quotes’')).toBe('UCS-2');
    expect(chooseEncoding('Привет')).toBe('UCS-2');
    expect(chooseEncoding('👍')).toBe('UCS-2');
    expect(chooseEncoding('`backtick`')).toBe('UCS-2');
  });

  it('agrees with countSegments on every character of the Basic Multilingual Plane', () => {
    const disagreements: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCharCode(code);
      if (chooseEncoding(char) !== countSegments(char).encoding)
        disagreements.push(code.toString(16));
    }
    expect(disagreements).toEqual([]);
  });
});

describe('GSM 03.38 septets', () => {
  it('maps characters to their septets, extension characters to ESC and their code', () => {
    expect([...encodeGsm7('@£$A_')]).toEqual([0x00, 0x01, 0x02, 0x41, 0x11]);
    expect([...encodeGsm7('€[]{}~|^\\\f')]).toEqual([
      0x1b, 0x65, 0x1b, 0x3c, 0x1b, 0x3e, 0x1b, 0x28, 0x1b, 0x29, 0x1b, 0x3d, 0x1b, 0x40, 0x1b,
      0x14, 0x1b, 0x2f, 0x1b, 0x0a,
    ]);
    expect(gsmSeptets('ç')).toBeUndefined();
    expect(() => encodeGsm7('ç')).toThrow('"ç" is not in the GSM 03.38 alphabet');
  });

  it('decodes what it encodes', () => {
    const text = 'Hello @ £$¥ {€} [x] ~|^\\ ΔΩ äöñüà §¿¡';
    expect(decodeGsm7(encodeGsm7(text))).toBe(text);
  });

  it('writes UCS-2 as UTF-16BE, surrogate pairs included', () => {
    const encoded = encodeSms('Жë👍', 0).parts[0] as Buffer;
    expect(encoded.toString('hex')).toBe('0416' + '00eb' + 'd83ddc4d');
    expect(decodeUcs2(encoded)).toBe('Жë👍');
  });
});

describe('splitting', () => {
  it('keeps up to 160 GSM-7 septets in one part, without a UDH', () => {
    const text = 'a'.repeat(160);
    expect(encodeSms(text, 7)).toEqual({
      encoding: 'GSM-7',
      dataCoding: 0,
      esmClass: 0,
      parts: [Buffer.from(text, 'latin1')],
    });
  });

  it('splits 161 septets into parts of 153 behind a concatenation UDH', () => {
    const encoded = encodeSms('b'.repeat(161), 7);
    expect(encoded.esmClass).toBe(0x40);
    expect(encoded.parts.map(udhOf)).toEqual([
      [0x05, 0x00, 0x03, 7, 2, 1],
      [0x05, 0x00, 0x03, 7, 2, 2],
    ]);
    expect(encoded.parts.map((part) => bodyOf(part).length)).toEqual([153, 8]);
  });

  it('counts extension characters twice and never splits one across parts', () => {
    // 80 euro signs are 160 septets: one part. 81 are 162: split.
    expect(encodeSms('€'.repeat(80), 1).parts).toHaveLength(1);
    const split = encodeSms('€'.repeat(81), 1);
    // 76 euros (152 septets) fit the first part; a 77th would straddle its end.
    expect(split.parts.map((part) => bodyOf(part).length)).toEqual([152, 10]);
    expect(split.parts.map((part) => decodeGsm7(bodyOf(part)))).toEqual([
      '€'.repeat(76),
      '€'.repeat(5),
    ]);
    const boundary = encodeSms(`${'x'.repeat(152)}€y${'z'.repeat(20)}`, 1);
    expect(boundary.parts.map((part) => decodeGsm7(bodyOf(part)))).toEqual([
      'x'.repeat(152),
      `€y${'z'.repeat(20)}`,
    ]);
  });

  it('keeps up to 70 UCS-2 code units in one part, and splits longer texts into 67s', () => {
    expect(encodeSms('ж'.repeat(70), 3)).toEqual({
      encoding: 'UCS-2',
      dataCoding: 8,
      esmClass: 0,
      parts: [Buffer.from('ж'.repeat(70), 'utf16le').swap16()],
    });
    const split = encodeSms('ж'.repeat(71), 3);
    expect(split.parts.map(udhOf)).toEqual([
      [0x05, 0x00, 0x03, 3, 2, 1],
      [0x05, 0x00, 0x03, 3, 2, 2],
    ]);
    expect(split.parts.map((part) => bodyOf(part).length / 2)).toEqual([67, 4]);
  });

  it('never splits a surrogate pair or an emoji sequence between UCS-2 parts', () => {
    const pair = encodeSms(`${'ж'.repeat(66)}👍${'ж'.repeat(10)}`, 1);
    expect(pair.parts.map((part) => decodeUcs2(bodyOf(part)))).toEqual([
      'ж'.repeat(66),
      `👍${'ж'.repeat(10)}`,
    ]);
    const family = '👨‍👩‍👧';
    const sequence = encodeSms(`${'ж'.repeat(64)}${family}ж`, 1);
    expect(sequence.parts.map((part) => decodeUcs2(bodyOf(part)))).toEqual([
      'ж'.repeat(64),
      `${family}ж`,
    ]);
  });

  it('makes as many parts as countSegments counts', () => {
    const samples = [
      'Plain text. '.repeat(40),
      `${'€[]'.repeat(70)}end`,
      `${'x'.repeat(152)}€${'y'.repeat(300)}`,
      'Привет, мир! '.repeat(20),
      `Hi 👋🏽 ${'🇦🇺 and ✓ '.repeat(30)}`,
      'Line one\r\nLine two\r\n'.repeat(30),
      `${'ж'.repeat(65)}\r\n${'ж'.repeat(70)}`,
      'a'.repeat(1600),
      'ж'.repeat(1600),
    ];
    for (const text of samples) {
      const encoded = encodeSms(text, 9);
      expect({ text: text.slice(0, 20), parts: encoded.parts.length }).toEqual({
        text: text.slice(0, 20),
        parts: countSegments(text).segments,
      });
      const bodies = encoded.parts.map((part) => (encoded.parts.length > 1 ? bodyOf(part) : part));
      const decoded = bodies
        .map((body) => (encoded.dataCoding === 0 ? decodeGsm7(body) : decodeUcs2(body)))
        .join('');
      expect(decoded).toBe(text);
    }
  });
});
