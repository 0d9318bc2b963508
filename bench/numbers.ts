/**
 * `npx tsx bench/numbers.ts`: the api's number-plan check of a 1,000-recipient send, in one
 * process, no stack. Before: libphonenumber asked for every number (parse and isValid with the
 * full metadata, what domain/phone.ts did until 2026-11-27). After: domain/number-plan.ts, the
 * same answers once per deciding prefix. Both on the same lists in the same run, alternating
 * which goes first; CPU milliseconds of this process per 1,000 numbers, the median of the rounds
 * and the first round (prefixes not yet known; libphonenumber's own first calls are paid by
 * whichever path met a country first, so only the medians compare). Also the whole send body
 * validated (domain/send-request.ts), after. Prints JSON. BENCH_NUMBER_ROUNDS sets the rounds.
 */
import { cpus } from 'node:os';
import { getCountries } from 'libphonenumber-js/max';
import { libraryAnswer, planAnswer, planStats } from '../domain/number-plan.js';
import { validateSendRequest } from '../domain/send-request.js';
import { numbersNear, randomDigits, seededRandom } from '../test/support/phone-corpus.js';
import { recipients as benchSmsRecipients } from './support/campaigns.js';
import { median, round } from './support/measure.js';

const ROUNDS = Number(process.env.BENCH_NUMBER_ROUNDS ?? 20);
const random = seededRandom(1127);
const countries = getCountries();

/** Each round's 1,000 numbers: the same list every round, or a new one. */
const LISTS: { name: string; about: string; list: (round: number) => string[] }[] = [
  {
    name: 'bench_sms_list',
    about: "bench:sms's recipients, +61410000000 … +61410000999, the same every round",
    list: () => benchSmsRecipients,
  },
  {
    name: 'random_au_mobiles',
    about: '1,000 new random +614 numbers each round',
    list: () => Array.from({ length: 1000 }, () => `+614${randomDigits(random, 8)}`),
  },
  {
    name: 'random_countries',
    about: '1,000 new numbers each round, near the example mobile of a random country each',
    list: () =>
      Array.from({ length: 1000 }, () => {
        const country = countries[Math.floor(random() * countries.length)] ?? 'AU';
        return numbersNear(random, country, 1)[0] as string;
      }),
  },
  {
    name: 'random_us',
    about: '1,000 new random +1 numbers each round (NANP: 25 countries, long patterns)',
    list: () =>
      Array.from(
        { length: 1000 },
        () => `+1${2 + Math.floor(random() * 8)}${randomDigits(random, 9)}`,
      ),
  },
];

function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Once, before any timing: both paths loaded and their code warm on other numbers. */
for (const country of ['NZ', 'GB', 'DE'] as const) {
  for (const number of numbersNear(seededRandom(1), country, 300)) {
    libraryAnswer(number);
    planAnswer(number);
  }
}

const results = [];
for (const { name, about, list } of LISTS) {
  const before: number[] = [];
  const after: number[] = [];
  const asked: number[] = [];
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
    const numbers = list(roundIndex);
    const askedBefore = planStats().libraryAsked;
    const timeAfter = () => after.push(cpuMs(() => numbers.forEach(planAnswer)));
    const timeBefore = () => before.push(cpuMs(() => numbers.forEach(libraryAnswer)));
    if (roundIndex % 2 === 0) {
      timeAfter();
      asked.push(planStats().libraryAsked - askedBefore);
      timeBefore();
    } else {
      timeBefore();
      const askedAfter = planStats().libraryAsked;
      timeAfter();
      asked.push(planStats().libraryAsked - askedAfter);
    }
  }
  const beforeMs = median(before);
  const afterMs = median(after);
  results.push({
    list: name,
    about,
    before_ms_per_1000: round(beforeMs, 2),
    after_ms_per_1000: round(afterMs, 2),
    after_first_round_ms: round(after[0] ?? Number.NaN, 2),
    before_over_after: round(beforeMs / afterMs, 1),
    libphonenumber_asked_per_1000: { first_round: asked[0], median: median(asked) },
  });
}

const body = { recipients: benchSmsRecipients, message: 'Your order has shipped.' };
const bodyMs = median(
  Array.from({ length: ROUNDS }, () =>
    cpuMs(() => {
      if (!validateSendRequest(body).ok) throw new Error('the bench body must be valid');
    }),
  ),
);

process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'numbers',
      machine: { cpus: cpus().length, node: process.version },
      setup: `${ROUNDS} rounds per list; CPU ms of this process (user + system) per 1,000 numbers, median over rounds; before = libphonenumber parse + isValid per number, after = domain/number-plan.ts planAnswer`,
      lists: results,
      send_body_1000_recipients_ms: round(bodyMs, 2),
      prefixes_kept: planStats().prefixesKept,
    },
    null,
    2,
  )}\n`,
);
