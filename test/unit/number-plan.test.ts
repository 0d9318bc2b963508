import {
  getCountries,
  getExampleNumber,
  Metadata,
  parsePhoneNumberFromString,
} from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { DigitPattern, type Outcome } from '../../domain/digit-pattern.js';
import { planAnswer, planStats } from '../../domain/number-plan.js';
import { parseE164 } from '../../domain/phone.js';
import { validateSendRequest } from '../../domain/send-request.js';
import { phoneCorpus, randomDigits, seededRandom } from '../support/phone-corpus.js';

/** What domain/phone.ts asked before: libphonenumber's parse and isValid for every number. */
function libphonenumberSays(e164: string) {
  const parsed = parsePhoneNumberFromString(e164, { extract: false });
  if (!parsed?.isValid()) return undefined;
  return { number: parsed.number, country: parsed.country, type: parsed.getType() };
}

function errorsFor(recipients: unknown[]) {
  const result = validateSendRequest({ recipients, message: 'Hello' });
  if (result.ok) throw new Error('expected a validation failure');
  return result.errors;
}

const INVALID = 'field must be a valid E.164 phone number.';

// Runs first: the memo is the module's, and this range must not have been met yet.
describe('planAnswer: once per deciding prefix', () => {
  it('asks libphonenumber 16 times for 1,000 numbers of one range, and answers each as it would', () => {
    const range = Array.from({ length: 1000 }, (_, i) => `+6142000${String(i).padStart(4, '0')}`);
    const before = planStats().libraryAsked;
    const answers = range.map(planAnswer);
    // The first 16 numbers of a calling code are asked; the 16th's prefix then stands for the rest.
    expect(planStats().libraryAsked - before).toBe(16);
    expect(answers).toEqual(range.map(libphonenumberSays));
    expect(answers[7]).toEqual({ number: '+61420000007', country: 'AU', type: 'MOBILE' });
  });

  it('answers as libphonenumber does over a generated corpus, met first and met again', () => {
    const corpus = phoneCorpus(28, 40, 15_000);
    const expected = corpus.map(libphonenumberSays);
    const asked = planStats().libraryAsked;
    expect(corpus.map(planAnswer)).toEqual(expected);
    const askedFirst = planStats().libraryAsked - asked;
    expect(corpus.map(planAnswer)).toEqual(expected);
    const askedAgain = planStats().libraryAsked - asked - askedFirst;

    // The corpus covers what it must: many valid numbers, trunk prefixes, many countries.
    const valid = expected.filter((answer) => answer !== undefined);
    expect(corpus.length).toBeGreaterThan(34_000);
    expect(valid.length).toBeGreaterThan(4_500);
    expect(new Set(valid.map((answer) => answer.country)).size).toBeGreaterThan(230);
    const normalized = corpus.filter((number, i) => {
      const answer = expected[i];
      return answer !== undefined && answer.number !== number;
    });
    expect(normalized.length).toBeGreaterThan(250);
    // Met again, most are answered by a kept prefix.
    expect(askedAgain).toBeLessThan(corpus.length / 3);
  }, 60_000);

  it('normalizes a trunk prefix after the country code, as before', () => {
    expect(parseE164('+610412345678')).toBe('+61412345678');
    expect(parseE164('+610412345679')).toBe('+61412345679');
    expect(planAnswer('+610412345678')).toEqual(libphonenumberSays('+610412345678'));
  });
});

describe('the 422 for numbers not in their plan', () => {
  it('names each invalid recipient with the same message, next to valid ones of the same range', () => {
    // Met first valid, then one digit short and one too long in the same range.
    expect(
      errorsFor([
        '+61410000000',
        '+6141000000',
        '+614100000000',
        '+15555550100',
        '+44791112345',
        '+861380013800',
        '+999123456789',
        '+61012345678',
        '+8613800138000',
      ]),
    ).toEqual({
      'recipients.1': [`The recipients.1 ${INVALID}`],
      'recipients.2': [`The recipients.2 ${INVALID}`],
      'recipients.3': [`The recipients.3 ${INVALID}`],
      'recipients.4': [`The recipients.4 ${INVALID}`],
      'recipients.5': [`The recipients.5 ${INVALID}`],
      'recipients.6': [`The recipients.6 ${INVALID}`],
      'recipients.7': [`The recipients.7 ${INVALID}`],
    });
  });
});

/** none/some/all by asking the RegExp of every completion of `digits` by `remaining` digits. */
function regExpOutcome(source: string, mode: 'full' | 'prefix', digits: string, remaining: number) {
  const pattern = new RegExp(`^(?:${source})${mode === 'full' ? '$' : ''}`);
  let matched = 0;
  const total = 10 ** remaining;
  for (let completion = 0; completion < total; completion++) {
    const suffix = remaining === 0 ? '' : String(completion).padStart(remaining, '0');
    if (pattern.test(digits + suffix)) matched++;
  }
  return matched === 0 ? 'none' : matched === total ? 'all' : 'some';
}

describe('DigitPattern', () => {
  it('decides a prefix as the RegExp does over every completion, for every metadata pattern', {
    timeout: 60_000,
  }, () => {
    const metadata = new Metadata() as unknown as {
      selectNumberingPlan(country: string): void;
      numberingPlan: {
        nationalNumberPattern(): string;
        leadingDigits(): string | undefined;
        nationalPrefixForParsing(): string | undefined;
        type(type: string): { pattern(): string } | undefined;
      };
    };
    const random = seededRandom(5);
    let compared = 0;
    const outcomes = new Set<Outcome>();
    for (const country of getCountries()) {
      const example = getExampleNumber(country, examples)?.nationalNumber ?? '';
      metadata.selectNumberingPlan(country);
      const plan = metadata.numberingPlan;
      const sources = [
        plan.nationalNumberPattern(),
        plan.type('MOBILE')?.pattern(),
        plan.type('FIXED_LINE')?.pattern(),
        plan.leadingDigits(),
        plan.nationalPrefixForParsing(),
      ];
      for (const source of sources) {
        if (!source) continue;
        const pattern = DigitPattern.compile(source);
        if (!pattern) {
          // Only `$` is outside the syntax read, and it is never read as something else.
          expect(source).toContain('$');
          continue;
        }
        for (let trial = 0; trial < 6; trial++) {
          // Half the prefixes from the example mobile, so that patterns match as often as not.
          const length = Math.floor(random() * 9);
          const digits = trial % 2 === 0 ? example.slice(0, length) : randomDigits(random, length);
          const remaining = Math.floor(random() * 4);
          for (const mode of ['full', 'prefix'] as const) {
            const outcome = pattern.outcome(mode, digits, remaining);
            expect(outcome, `${source} ${mode} ${digits}+${remaining}`).toBe(
              regExpOutcome(source, mode, digits, remaining),
            );
            outcomes.add(outcome);
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(5_000);
    expect([...outcomes].sort()).toEqual(['all', 'none', 'some']);
  });

  it('reads nothing outside the metadata syntax', () => {
    for (const source of ['([59]\\d{7})$|0', '\\d+?', 'a', '[^0]', '(?=1)1', '\\s', '1{,2}']) {
      expect(DigitPattern.compile(source), source).toBeUndefined();
    }
  });
});
