/**
 * Whether a strict E.164 number exists in its numbering plan, and its country and type:
 * libphonenumber's answer (`libphonenumber-js/max`, the full metadata), worked out once per
 * prefix that decides it (domain/deciding-prefix.ts says which and why). Pure: safe inside
 * Temporal workflows. The first number of a decided prefix is asked of libphonenumber and its
 * answer kept for the prefix and length; a trunk prefix, a non-geographic calling code, or a
 * number no shorter prefix decides is asked each time.
 */
import { type PhoneNumberType, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { callingCodeOf, decidingPrefixLength } from './deciding-prefix.js';

/** A number valid in its plan. */
export interface PlanAnswer {
  /** Normalized E.164 (a trunk prefix after the country code dropped). */
  number: string;
  /** ISO 3166 alpha-2; undefined when the calling code's countries do not tell. */
  country: string | undefined;
  type: PhoneNumberType | undefined;
}

/** How often libphonenumber was asked, and how many prefixes stand for their numbers. */
const stats = { libraryAsked: 0, prefixesKept: 0 };

export function planStats(): Readonly<typeof stats> {
  return { ...stats };
}

/** libphonenumber's own answer for a strict E.164 number, asked every time. */
export function libraryAnswer(e164: string): PlanAnswer | undefined {
  stats.libraryAsked++;
  const parsed = parsePhoneNumberFromString(e164, { extract: false });
  if (!parsed?.isValid()) return undefined;
  return { number: parsed.number, country: parsed.country, type: parsed.getType() };
}

/**
 * A calling code's prefixes are decided only once this many of its numbers were asked of
 * libphonenumber: reading its patterns costs more than asking a few times, so a country met
 * rarely is asked each time, as before.
 */
const MIN_ASKED_TO_DECIDE = 16;
const askedByCode = new Map<string, number>();

/** libphonenumber's answer for every number of a decided prefix: the validity, country and type. */
interface PrefixAnswer {
  valid: boolean;
  country: string | undefined;
  type: PhoneNumberType | undefined;
}

/**
 * Answers by `<calling code>:<national length>`, then by decided prefix. Bounded: past
 * MAX_PREFIXES nothing more is kept (answers stay exact, only no faster).
 */
const answersByShape = new Map<
  string,
  { lengths: number[]; byPrefix: Map<string, PrefixAnswer> }
>();
const MAX_PREFIXES = 50_000;

/** libphonenumber's answer for a strict E.164 number (`^\+[1-9]\d{7,14}$`), once per prefix. */
export function planAnswer(e164: string): PlanAnswer | undefined {
  const code = callingCodeOf(e164);
  if (code === undefined) return libraryAnswer(e164);
  const national = e164.slice(1 + code.length);
  const shapeKey = `${code}:${national.length}`;
  const shape = answersByShape.get(shapeKey);
  if (shape) {
    for (const length of shape.lengths) {
      const kept = shape.byPrefix.get(national.slice(0, length));
      if (kept)
        return kept.valid ? { number: e164, country: kept.country, type: kept.type } : undefined;
    }
  }
  const answer = libraryAnswer(e164);
  const asked = (askedByCode.get(code) ?? 0) + 1;
  askedByCode.set(code, asked);
  if (asked >= MIN_ASKED_TO_DECIDE && stats.prefixesKept < MAX_PREFIXES) {
    const length = decidingPrefixLength(code, national);
    // With no trunk prefix possible, libphonenumber's normalized form is the number itself.
    if (length !== undefined && (answer === undefined || answer.number === e164)) {
      keep(shapeKey, national.slice(0, length), {
        valid: answer !== undefined,
        country: answer?.country,
        type: answer?.type,
      });
    }
  }
  return answer;
}

function keep(shapeKey: string, prefix: string, answer: PrefixAnswer): void {
  let shape = answersByShape.get(shapeKey);
  if (!shape) {
    shape = { lengths: [], byPrefix: new Map() };
    answersByShape.set(shapeKey, shape);
  }
  if (!shape.lengths.includes(prefix.length)) {
    shape.lengths.push(prefix.length);
    shape.lengths.sort((a, b) => a - b);
  }
  shape.byPrefix.set(prefix, answer);
  stats.prefixesKept++;
}
