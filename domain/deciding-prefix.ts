/**
 * Which prefix of a number's national digits decides libphonenumber's answer for every number
 * with that prefix and length (domain/number-plan.ts keeps the answer per prefix). Pure.
 *
 * For `+<calling code><national digits>` in strict E.164 form, libphonenumber-js/max's parse
 * and `isValid()`/`getType()` (read in its source, 1.13.16) take these steps, each on the
 * national digits' length (a constant here) or on whether they match a pattern:
 * 1. the calling code's main plan's national prefix for parsing, at the start: a match may strip
 *    a trunk prefix (`+610412…` is `+61412…`); here it must match no completion;
 * 2. the country: a calling code of one country is that country; else the countries in order,
 *    each by its leading digits at the start when it has them, else by whether getNumberType
 *    finds a type; none found: the main plan answers;
 * 3. the type of that country (getNumberType): its national number pattern, then FIXED_LINE
 *    (and then MOBILE), else each other type in order until one matches; valid when one does.
 * Following the same steps on a prefix, a step is decided when its pattern answers the same
 * for every completion (domain/digit-pattern.ts). When every step on the way is decided, every
 * number with the prefix and length takes the same way and gets the same answer.
 */
import { Metadata } from 'libphonenumber-js/max';
import { DigitPattern, type Outcome } from './digit-pattern.js';

/** The methods of libphonenumber's Metadata read here (its typings declare fewer). */
interface PlanMetadata {
  hasCallingCode(code: string): boolean;
  isNonGeographicCallingCode(code: string): boolean;
  getCountryCodesForCallingCode(code: string): string[] | undefined;
  selectNumberingPlan(countryOrCallingCode: string): void;
  numberingPlan: {
    nationalPrefixForParsing(): string | undefined;
    leadingDigits(): string | undefined;
    nationalNumberPattern(): string;
    type(type: string): { pattern(): string } | undefined;
  };
}

const metadata = new Metadata() as unknown as PlanMetadata;

/** getNumberType's types after FIXED_LINE, in its order. */
const OTHER_TYPES = [
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
];

/** A pattern compiled when first asked; one outside the syntax read decides nothing. */
class LazyPattern {
  private pattern: DigitPattern | null | undefined;

  constructor(
    private readonly source: string,
    private readonly mode: 'full' | 'prefix',
  ) {}

  outcome(national: string, length: number): Outcome {
    if (this.pattern === undefined) this.pattern = DigitPattern.compile(this.source) ?? null;
    if (!this.pattern) return 'some';
    return this.pattern.outcome(this.mode, national.slice(0, length), national.length - length);
  }
}

interface CountryPatterns {
  leading: LazyPattern | undefined;
  national: LazyPattern;
  /** Absent or an empty pattern: never matches (isNumberTypeEqualTo). */
  fixedLine: LazyPattern | undefined;
  /** Asked after FIXED_LINE matched; `constant` when absent or empty (the answer is then fixed). */
  mobileAfterFixedLine: LazyPattern | 'constant';
  /** The other types with a pattern, in getNumberType's order (MOBILE first). */
  others: LazyPattern[];
}

interface CallingCodePatterns {
  nationalPrefix: LazyPattern | undefined;
  countries: CountryPatterns[];
}

const patternsByCode = new Map<string, CallingCodePatterns | null>();

/** Null for a calling code no prefix stands for (non-geographic). */
function patternsOf(code: string): CallingCodePatterns | null {
  let patterns = patternsByCode.get(code);
  if (patterns === undefined) {
    patterns = readPatterns(code);
    patternsByCode.set(code, patterns);
  }
  return patterns;
}

function readPatterns(code: string): CallingCodePatterns | null {
  const countries = metadata.getCountryCodesForCallingCode(code);
  if (metadata.isNonGeographicCallingCode(code) || !countries) return null;
  metadata.selectNumberingPlan(code);
  const trunk = metadata.numberingPlan.nationalPrefixForParsing();
  return {
    nationalPrefix: trunk ? new LazyPattern(trunk, 'prefix') : undefined,
    countries: countries.map((country) => {
      metadata.selectNumberingPlan(country);
      const plan = metadata.numberingPlan;
      const full = (type: string) => {
        const source = plan.type(type)?.pattern();
        return source ? new LazyPattern(source, 'full') : undefined;
      };
      const leading = plan.leadingDigits();
      return {
        leading: leading ? new LazyPattern(leading, 'prefix') : undefined,
        national: new LazyPattern(plan.nationalNumberPattern(), 'full'),
        fixedLine: full('FIXED_LINE'),
        mobileAfterFixedLine: full('MOBILE') ?? 'constant',
        others: OTHER_TYPES.flatMap((type) => full(type) ?? []),
      };
    }),
  };
}

/** The calling code as libphonenumber takes it: the first of 1 to 3 digits that is one. */
export function callingCodeOf(e164: string): string | undefined {
  for (let length = 1; length <= 3; length++) {
    const code = e164.slice(1, 1 + length);
    if (metadata.hasCallingCode(code)) return code;
  }
  return undefined;
}

/** getNumberType over the completions: `all` a type for every one, `none` for none. */
function typeOutcome(country: CountryPatterns, national: string, length: number): Outcome {
  const inPlan = country.national.outcome(national, length);
  if (inPlan !== 'all') return inPlan;
  const fixedLine = country.fixedLine?.outcome(national, length) ?? 'none';
  if (fixedLine === 'some') return 'some';
  if (fixedLine === 'all') {
    const mobile = country.mobileAfterFixedLine;
    return mobile === 'constant' || mobile.outcome(national, length) !== 'some' ? 'all' : 'some';
  }
  for (const other of country.others) {
    const outcome = other.outcome(national, length);
    if (outcome !== 'none') return outcome;
  }
  return 'none';
}

/** Whether steps 2 and 3 are decided after `length` digits of `national`. */
function decidedAt(patterns: CallingCodePatterns, national: string, length: number): boolean {
  const { countries } = patterns;
  const decidedType = (country: CountryPatterns | undefined) =>
    country !== undefined && typeOutcome(country, national, length) !== 'some';
  if (countries.length === 1) return decidedType(countries[0]);
  for (const country of countries) {
    if (country.leading) {
      const leading = country.leading.outcome(national, length);
      if (leading === 'some') return false;
      if (leading === 'all') return decidedType(country);
      continue;
    }
    const type = typeOutcome(country, national, length);
    if (type === 'some') return false;
    if (type === 'all') return true;
  }
  return decidedType(countries[0]);
}

/**
 * The shortest prefix of `national` (the digits after `code`) after which libphonenumber's way
 * is decided; undefined when none short of the whole number is, or a trunk prefix may match.
 */
export function decidingPrefixLength(code: string, national: string): number | undefined {
  const patterns = patternsOf(code);
  if (!patterns) return undefined;
  let from = 0;
  const trunk = patterns.nationalPrefix;
  if (trunk) {
    for (; ; from++) {
      if (from > national.length) return undefined;
      const outcome = trunk.outcome(national, from);
      if (outcome === 'none') break;
      if (outcome === 'all') return undefined;
    }
  }
  // A prefix that is the whole number stands for no other.
  let undecided = from - 1;
  let decided = national.length - 1;
  if (decided < from || !decidedAt(patterns, national, decided)) return undefined;
  // A decided prefix stays decided when longer: the shortest is found by halving, after the
  // longest short of the number, the cheapest question and the usual `no`.
  while (decided - undecided > 1) {
    const middle = (decided + undecided) >> 1;
    if (decidedAt(patterns, national, middle)) decided = middle;
    else undecided = middle;
  }
  return decided;
}
