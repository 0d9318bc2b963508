/**
 * Phone number checks (docs/spec.md §4.1, §8). Pure: no Node built-ins, so it is safe to import inside
 * Temporal workflows. Validity, country and type are libphonenumber's with its full metadata,
 * worked out once per deciding prefix (domain/number-plan.ts; bench/numbers.ts).
 */
import { type PlanAnswer, planAnswer } from './number-plan.js';

/**
 * Strict E.164, the one definition every layer uses: `+`, then 8 to 15 digits, the first not 0;
 * no spaces or punctuation. Whether the number exists in its plan is `parseE164`'s question.
 */
const DIGITS = '[1-9][0-9]{7,14}';
export const E164 = new RegExp(`^\\+${DIGITS}$`);
/** The digits of an E.164 number without its `+`, as an SMSC writes an international address. */
export const E164_DIGITS = new RegExp(`^${DIGITS}$`);
/** Any ITU-T E.164 address, short ones too (senders, SMPP addresses): `+`, 2 to 15 digits. */
export const E164_ADDRESS = /^\+[1-9]\d{1,14}$/;
/** The start of an E.164 number (a fraud-guard range): `+`, 1 to 15 digits. */
export const E164_PREFIX = /^\+[1-9]\d{0,14}$/;

function parseStrict(value: unknown): PlanAnswer | undefined {
  if (typeof value !== 'string' || !E164.test(value)) return undefined;
  return planAnswer(value);
}

/**
 * The normalized E.164 form of a valid phone number given in strict E.164 form, else undefined.
 * Normalization drops a trunk prefix written after the country code (`+610412…` → `+61412…`).
 */
export function parseE164(value: unknown): string | undefined {
  return parseStrict(value)?.number;
}

/** Whether a strict E.164 number is a valid Australian mobile (or fixed-line-or-mobile) number. */
export function isAustralianMobile(e164: string): boolean {
  const parsed = parseStrict(e164);
  if (parsed?.country !== 'AU') return false;
  const type = parsed.type;
  return type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE';
}

/** The ISO 3166 alpha-2 country of a strict E.164 number, if it is valid. */
export function countryOf(e164: string): string | undefined {
  return parseStrict(e164)?.country;
}

/** Destinations a provider takes: `all`, or ISO 3166 alpha-2 codes. */
export type Countries = 'all' | readonly string[];

export function serves(countries: Countries, e164: string): boolean {
  if (countries === 'all') return true;
  const country = countryOf(e164);
  return country !== undefined && countries.includes(country);
}

/**
 * `+61412345678` → `•••• 5678`: enough for its owner to recognise, nothing for anyone else (an
 * opt-out page, a member without recipients.read).
 */
export function maskedNumber(e164: string): string {
  return `•••• ${e164.slice(-4)}`;
}

/**
 * A stored number as a viewer may see it: in full with recipients.read, else masked. Retention
 * and erasure leave a number masked already: it is shown as it is.
 */
export function numberShown(stored: string, full: boolean): string {
  return full || !stored.startsWith('+') ? stored : maskedNumber(stored);
}

/**
 * A number as it appears inside free text (a provider's error): E.164 with or without its `+`
 * (an SMSC quotes it bare), not part of a longer run of digits. One source that both JavaScript
 * and Postgres regular expressions read (db/ groups error texts by it).
 */
export const NUMBER_IN_TEXT = `(?<![0-9])\\+?${DIGITS}(?![0-9])`;

/** `Destination +61412555011 rejected.` → `Destination •••• 5011 rejected.` */
export function numbersMaskedIn(text: string): string {
  return text.replace(new RegExp(NUMBER_IN_TEXT, 'g'), maskedNumber);
}

/** Free text (a provider's error) as a viewer may see it: as numbers are (numberShown). */
export function textShown(text: string, full: boolean): string {
  return full ? text : numbersMaskedIn(text);
}
