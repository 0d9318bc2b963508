/**
 * SMS text for SMPP 3.4 `submit_sm`: the encoding choice, GSM 03.38 septets, UCS-2, and the split
 * into concatenated parts with a User Data Header.
 *
 * - GSM-7 (`data_coding` 0, the SMSC default alphabet) when every character is in the GSM 03.38
 *   default alphabet or its extension table, else UCS-2 (`data_coding` 8, UTF-16BE). The same
 *   rule, and the same character table, as Twilio's calculator behind `countSegments`
 *   (domain/segments.ts), so the parts sent are the segments counted.
 * - GSM-7 is written unpacked, one septet per octet, as SMPP carries it; extension characters
 *   take two septets (ESC + code) and are never split across parts.
 * - One part holds 160 septets or 70 UTF-16 code units. Longer texts go in parts of 153 septets
 *   or 67 code units behind a 6-octet UDH (`esm_class` 0x40): IE 0x00 (concatenated message,
 *   8-bit reference), length 3, reference, total parts, part number from 1. A UCS-2 part never
 *   ends inside a grapheme (a surrogate pair, an emoji sequence), as the calculator counts them.
 */

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export const DATA_CODING: Record<SmsEncoding, number> = { 'GSM-7': 0x00, 'UCS-2': 0x08 };
/** `esm_class` bit: the short message starts with a User Data Header. */
export const ESM_CLASS_UDHI = 0x40;

/** Capacity of one part without and with the concatenation UDH. */
export const PART_CAPACITY: Record<SmsEncoding, { single: number; concatenated: number }> = {
  'GSM-7': { single: 160, concatenated: 153 },
  'UCS-2': { single: 70, concatenated: 67 },
};

const ESC = 0x1b;

/** GSM 03.38 default alphabet, indexed by septet. 0x1B is the escape to the extension table. */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** GSM 03.38 extension table: character → septet after ESC. */
const GSM_EXTENSION: Record<string, number> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
};

const BASIC_SEPTET = new Map<string, number>(
  [...GSM_BASIC].flatMap((char, septet) => (septet === ESC ? [] : [[char, septet]])),
);
const EXTENSION_CHAR = new Map<number, string>(
  Object.entries(GSM_EXTENSION).map(([char, septet]) => [septet, char]),
);

/** The septets of one character in GSM-7, or undefined when it has none. */
export function gsmSeptets(char: string): number[] | undefined {
  const basic = BASIC_SEPTET.get(char);
  if (basic !== undefined) return [basic];
  const extension = GSM_EXTENSION[char];
  return extension === undefined ? undefined : [ESC, extension];
}

export function isGsm7(text: string): boolean {
  for (const char of text) if (!gsmSeptets(char)) return false;
  return true;
}

export function chooseEncoding(text: string): SmsEncoding {
  return isGsm7(text) ? 'GSM-7' : 'UCS-2';
}

/** Septets (one per octet) of a GSM-7 text; throws on a character outside the alphabet. */
export function encodeGsm7(text: string): Buffer {
  const septets: number[] = [];
  for (const char of text) {
    const encoded = gsmSeptets(char);
    if (!encoded) throw new Error(`"${char}" is not in the GSM 03.38 alphabet`);
    septets.push(...encoded);
  }
  return Buffer.from(septets);
}

/** Text of unpacked GSM-7 septets; an unknown escape keeps its base character, as 03.38 says. */
export function decodeGsm7(septets: Uint8Array): string {
  let text = '';
  for (let index = 0; index < septets.length; index++) {
    const septet = (septets[index] as number) & 0x7f;
    if (septet === ESC && index + 1 < septets.length) {
      const next = (septets[++index] as number) & 0x7f;
      text += EXTENSION_CHAR.get(next) ?? GSM_BASIC[next];
    } else {
      text += GSM_BASIC[septet];
    }
  }
  return text;
}

export function encodeUcs2(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

export function decodeUcs2(octets: Uint8Array): string {
  const even = octets.length - (octets.length % 2);
  return Buffer.from(octets.subarray(0, even)).swap16().toString('utf16le');
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The units a text is packed from: GSM-7 characters (one or two septets each), or UCS-2
 * graphemes (their UTF-16 code units). CR LF counts as two, as in the calculator.
 */
function units(text: string, encoding: SmsEncoding): Buffer[] {
  if (encoding === 'GSM-7') return [...text].map((char) => encodeGsm7(char));
  const result: Buffer[] = [];
  for (const { segment } of graphemes.segment(text)) {
    if (segment === '\r\n') result.push(encodeUcs2('\r'), encodeUcs2('\n'));
    else if (segment.length > PART_CAPACITY['UCS-2'].concatenated)
      // A grapheme longer than a part: split between code points, never inside a surrogate pair.
      for (const codePoint of segment) result.push(encodeUcs2(codePoint));
    else result.push(encodeUcs2(segment));
  }
  return result;
}

/** Size of a unit in the part's measure: septets for GSM-7, code units for UCS-2. */
const sizeOf = (unit: Buffer, encoding: SmsEncoding) =>
  encoding === 'GSM-7' ? unit.length : unit.length / 2;

export interface EncodedSms {
  encoding: SmsEncoding;
  dataCoding: number;
  /** `esm_class` of every part: 0x40 (UDH indicator) when the text is split, else 0. */
  esmClass: number;
  /** The `short_message` of each part, UDH included, in order. */
  parts: Buffer[];
}

/** The 6-octet UDH of part `seq` (from 1) of `total`: IE 0x00, 8-bit reference. */
export function concatenationUdh(reference: number, total: number, seq: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, seq]);
}

/**
 * Encodes a text into the `short_message` of each part. `reference` (0-255) identifies the
 * parts of one message to the handset; it only has to differ between a sender's concurrent
 * long messages to one recipient.
 */
export function encodeSms(text: string, reference: number): EncodedSms {
  const encoding = chooseEncoding(text);
  const dataCoding = DATA_CODING[encoding];
  const capacity = PART_CAPACITY[encoding];
  const pieces = units(text, encoding);
  const total = pieces.reduce((sum, unit) => sum + sizeOf(unit, encoding), 0);
  if (total <= capacity.single)
    return { encoding, dataCoding, esmClass: 0, parts: [Buffer.concat(pieces)] };

  const bodies: Buffer[][] = [[]];
  let used = 0;
  for (const unit of pieces) {
    const size = sizeOf(unit, encoding);
    if (used + size > capacity.concatenated) {
      bodies.push([]);
      used = 0;
    }
    (bodies.at(-1) as Buffer[]).push(unit);
    used += size;
  }
  if (bodies.length > 255)
    throw new Error(`the text needs ${bodies.length} parts; 255 is the most`);
  return {
    encoding,
    dataCoding,
    esmClass: ESM_CLASS_UDHI,
    parts: bodies.map((body, index) =>
      Buffer.concat([concatenationUdh(reference, bodies.length, index + 1), ...body]),
    ),
  };
}
