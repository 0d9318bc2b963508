import { renderOptOutLink } from './opt-out.js';

export interface SegmentCount {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}

/** GSM 03.38 basic character set (7 bits each) and its extension table (escape + char, 14 bits). */
const GSM7_BASIC = new Set(
  '\n\r !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz¡£¤¥§¿ÄÅÆÇÉÑÖØÜßàäåæèéìñòöøùüΓΔΘΛΞΠΣΦΨΩ',
);
const GSM7_EXTENSION = new Set('\f[\\]^{|}~€');
/** 140 octets of user data; a part of a concatenated message gives 6 octets to its header. */
const SINGLE_SEGMENT_BITS = 1120;
const PART_BITS = 1120 - 48;
const graphemeSegmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
/**
 * V8's segmenter slows quadratically on long strings (80,000 characters: 3–16 s), so it reads
 * the text a window at a time. A window's last cluster may continue past it, so it is read
 * again at the start of the next window; a window that holds a single cluster grows.
 */
const WINDOW = 512;

function* graphemeClusters(text: string): Generator<string> {
  let start = 0;
  let size = WINDOW;
  while (start < text.length) {
    const clusters = Array.from(
      graphemeSegmenter.segment(text.slice(start, start + size)),
      ({ segment }) => segment,
    );
    const last = start + size >= text.length;
    if (!last && clusters.length < 2) {
      size *= 2;
      continue;
    }
    if (!last) clusters.pop();
    for (const cluster of clusters) {
      yield cluster;
      start += cluster.length;
    }
    size = WINDOW;
  }
}

/** The characters a handset shows, each kept whole within one part; CR LF counts as two. */
function* graphemes(text: string): Generator<string> {
  for (const cluster of graphemeClusters(text)) {
    if (cluster === '\r\n') {
      yield '\r';
      yield '\n';
    } else yield cluster;
  }
}

const isGsm7 = (character: string) => GSM7_BASIC.has(character) || GSM7_EXTENSION.has(character);

/** Parts needed for characters of these sizes (bits), none split between two parts. */
function parts(sizes: Iterable<number>): number {
  let total = 0;
  let segments = 1;
  let free = PART_BITS;
  for (const size of sizes) {
    total += size;
    if (size > free) {
      segments += 1;
      free = PART_BITS;
    }
    free -= size;
  }
  return total <= SINGLE_SEGMENT_BITS ? 1 : segments;
}

/**
 * How many SMS segments a text takes: GSM-7 (160 septets, 153 per part, extension characters
 * counting twice) unless a character needs UCS-2 (70 code units, 67 per part); a character is
 * never split between parts. The same answers as Twilio's `sms-segments-calculator` (a test
 * compares them), in linear time: that library's grapheme split is quadratic, and a request
 * must never be able to buy seconds of CPU with a long text.
 */
export function countSegments(text: string): SegmentCount {
  // GSM-7 characters never combine into one grapheme (CR LF counts as two anyway), so a GSM-7
  // text is measured by code unit.
  if (Array.prototype.every.call(text, isGsm7)) {
    return {
      encoding: 'GSM-7',
      segments: parts(Array.from(text, (character) => (GSM7_EXTENSION.has(character) ? 14 : 7))),
    };
  }
  return {
    encoding: 'UCS-2',
    segments: parts(Array.from(graphemes(text), (grapheme) => 16 * grapheme.length)),
  };
}

/** Segments of a campaign message as recipients get it: `{opt_out_url}` counts as the link it becomes. */
export function campaignSegments(body: string, publicUrl: string): number {
  return countSegments(renderOptOutLink(body, publicUrl)).segments;
}
