/**
 * Generated phone numbers in strict E.164 form, the same for the same seed: for every country
 * libphonenumber knows, numbers near its example mobile (mostly valid), random ones (mostly
 * invalid), ones with a trunk prefix after the country code (`+610412…`), and random numbers
 * of every shape. Used by the number-plan equality test and `npm run bench:numbers`.
 */
import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  getExampleNumber,
} from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { E164 } from '../../domain/phone.js';

/** mulberry32: a small deterministic generator in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomDigits(random: () => number, count: number): string {
  let digits = '';
  for (let index = 0; index < count; index++) digits += Math.floor(random() * 10);
  return digits;
}

/** `count` numbers in a country: its example mobile's first digits kept, the rest random. */
export function numbersNear(random: () => number, country: CountryCode, count: number): string[] {
  const code = getCountryCallingCode(country);
  const example = getExampleNumber(country, examples)?.nationalNumber ?? '';
  return Array.from({ length: count }, () => {
    const kept = Math.floor(random() * (example.length + 1));
    const length = example.length + Math.floor(random() * 3) - 1;
    return `+${code}${example.slice(0, kept)}${randomDigits(random, length - kept)}`;
  });
}

export function phoneCorpus(seed: number, perCountry: number, anyShape: number): string[] {
  const random = seededRandom(seed);
  const numbers: string[] = [];
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    numbers.push(...numbersNear(random, country, perCountry));
    for (let index = 0; index < perCountry; index++) {
      numbers.push(`+${code}${randomDigits(random, 6 + Math.floor(random() * 8))}`);
    }
    // A trunk prefix after the country code: valid ones are normalized without it.
    for (const near of numbersNear(random, country, Math.ceil(perCountry / 10))) {
      numbers.push(near.replace(`+${code}`, `+${code}0`));
    }
  }
  for (let index = 0; index < anyShape; index++) {
    numbers.push(
      `+${1 + Math.floor(random() * 9)}${randomDigits(random, 7 + Math.floor(random() * 8))}`,
    );
  }
  // Shuffled, so a prefix is first met at any point.
  for (let index = numbers.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [numbers[index], numbers[other]] = [numbers[other] as string, numbers[index] as string];
  }
  return numbers.filter((number) => E164.test(number));
}
