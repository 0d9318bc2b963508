/**
 * The fraud guard's settings, their defaults and their text forms (the CLI's and the console's
 * `5/15m,10/24h`), and the pure rules a send is held to. Stored settings are overrides: what a
 * workspace or OTP service does not set it inherits (a service from its workspace, a workspace
 * from the defaults here).
 */

import { isSupportedCountry } from 'libphonenumber-js/max';
import { z } from 'zod';
import { countryOf, E164_PREFIX } from './phone.js';

/** At most `sends` in any `seconds`. */
/** The rules a refusal is counted under (guard_refusals, herald_guard_refusals_total). */
export const GUARD_RULES = [
  'otp_per_recipient',
  'otp_country',
  'sms_country',
  'blocked_prefix',
  'range_breaker',
  'daily_cap',
  'key_rate',
  'workspace_rate',
] as const;

export type GuardRule = (typeof GUARD_RULES)[number];

export interface SendWindow {
  sends: number;
  seconds: number;
}

/** `sends` OTP sends to one range within `seconds`, under `verifiedPercent` verified: block it. */
export interface RangeBreaker {
  sends: number;
  seconds: number;
  verifiedPercent: number;
  coolDownSeconds: number;
}

/** A token bucket of `requests` tokens refilled over `perSeconds` (the IETF draft's q and w). */
export interface RequestRate {
  requests: number;
  perSeconds: number;
}

export type CountryList = 'any' | readonly string[];

/** A blocked prefix list may name the built-in list as `default`. */
export const DEFAULT_PREFIXES = 'default';

export interface GuardSettings {
  /** Per recipient and workspace; empty: no limit. */
  otpPerRecipient: readonly SendWindow[];
  otpCountries: CountryList;
  smsCountries: CountryList;
  /** E.164 prefixes, `default` standing for BUILT_IN_BLOCKED_PREFIXES. */
  blockedPrefixes: readonly string[];
  rangeBreaker: RangeBreaker | 'off';
  /** Segments per UTC day, SMS and OTP together; null: no cap. */
  dailySegments: number | null;
  /** The `spend.cap_near` webhook event goes once a day's use reaches this share of the cap. */
  capNearPercent: number;
  /** Each API key's rate, unless the key has its own. */
  keyRate: RequestRate | 'off';
  /** The whole workspace's rate, all its keys together. */
  workspaceRate: RequestRate | 'off';
}

/**
 * Number ranges no ordinary sign-in or notification needs and SMS pumping favours: premium-rate,
 * shared-cost and international-network ranges whose termination fees are shared with the range
 * holder. Each prefix with the reason it is here (docs/fraud-guard.md "Fraud guard").
 */
export const BUILT_IN_BLOCKED_PREFIXES: readonly { prefix: string; reason: string }[] = [
  { prefix: '+870', reason: 'Inmarsat satellite service' },
  { prefix: '+881', reason: 'Global Mobile Satellite System' },
  { prefix: '+882', reason: 'International Networks' },
  { prefix: '+883', reason: 'International Networks' },
  { prefix: '+808', reason: 'International Shared Cost Service' },
  { prefix: '+979', reason: 'International Premium Rate Service' },
  { prefix: '+1900', reason: 'North American premium rate (900)' },
  { prefix: '+449', reason: 'UK premium rate (09)' },
  { prefix: '+4470', reason: 'UK personal numbers (070), premium-rated forwarding' },
  { prefix: '+4484', reason: 'UK shared cost (084)' },
  { prefix: '+4487', reason: 'UK revenue sharing (087)' },
  { prefix: '+6119', reason: 'Australian premium rate (19)' },
];

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

/**
 * On by default, sized so that real sign-in traffic never meets them: a person asks for a code a
 * few times at most, and a block of 10,000 numbers rarely sees 20 sign-ins in an hour of which
 * fewer than 2 are completed. The API rates are those of a busy integration (Stripe's is 100/s).
 */
export const GUARD_DEFAULTS: GuardSettings = {
  otpPerRecipient: [
    { sends: 5, seconds: 15 * MINUTE },
    { sends: 10, seconds: DAY },
  ],
  otpCountries: 'any',
  smsCountries: 'any',
  blockedPrefixes: [DEFAULT_PREFIXES],
  rangeBreaker: { sends: 20, seconds: HOUR, verifiedPercent: 10, coolDownSeconds: HOUR },
  dailySegments: null,
  capNearPercent: 80,
  keyRate: { requests: 100, perSeconds: 1 },
  workspaceRate: { requests: 300, perSeconds: 1 },
};

/** Settings an OTP service may override; the rest are the workspace's alone. */
export const SERVICE_SETTINGS = [
  'otpPerRecipient',
  'otpCountries',
  'blockedPrefixes',
  'rangeBreaker',
] as const satisfies readonly (keyof GuardSettings)[];

const windowSchema = z.object({ sends: z.int().min(1), seconds: z.int().min(1) });
const rateSchema = z.object({ requests: z.int().min(1), perSeconds: z.int().min(1) });
/** What a row of guard_settings holds: any subset. */
export const guardOverridesSchema = z
  .object({
    otpPerRecipient: z.array(windowSchema),
    otpCountries: z.union([z.literal('any'), z.array(z.string())]),
    smsCountries: z.union([z.literal('any'), z.array(z.string())]),
    blockedPrefixes: z.array(z.string()),
    rangeBreaker: z.union([
      z.literal('off'),
      z.object({
        sends: z.int().min(1),
        seconds: z.int().min(1),
        verifiedPercent: z.number().min(0).max(100),
        coolDownSeconds: z.int().min(1),
      }),
    ]),
    dailySegments: z.int().min(1).nullable(),
    capNearPercent: z.int().min(1).max(100),
    keyRate: z.union([z.literal('off'), rateSchema]),
    workspaceRate: z.union([z.literal('off'), rateSchema]),
  })
  .partial();

export type GuardOverrides = z.infer<typeof guardOverridesSchema>;

/** The settings in force: the defaults, then the workspace's, then the OTP service's. */
export function effectiveGuard(
  workspace: GuardOverrides = {},
  service: GuardOverrides = {},
): GuardSettings {
  const own = Object.fromEntries(
    SERVICE_SETTINGS.flatMap((name) => (name in service ? [[name, service[name]]] : [])),
  );
  return { ...GUARD_DEFAULTS, ...workspace, ...own } as GuardSettings;
}

/** The prefixes a list blocks, `default` expanded. */
export function expandPrefixes(prefixes: readonly string[]): string[] {
  return [
    ...new Set(
      prefixes.flatMap((prefix) =>
        prefix === DEFAULT_PREFIXES
          ? BUILT_IN_BLOCKED_PREFIXES.map((item) => item.prefix)
          : [prefix],
      ),
    ),
  ];
}

/**
 * The number range a send counts toward: the number without its last 4 digits, a block of
 * 10,000 numbers. Operators allocate numbers, and pumping rings lease premium numbers, in blocks
 * of 10,000 or more, so an attack concentrates in few ranges while a range's real subscribers
 * sign in at a rate far under the breaker's.
 */
export function rangeOf(e164: string): string {
  return e164.slice(0, -4);
}

export function countryAllowed(countries: CountryList, e164: string): boolean {
  if (countries === 'any') return true;
  const country = countryOf(e164);
  return country !== undefined && countries.includes(country);
}

/**
 * Why a recipient may not be sent to, for the field's 422 message; undefined when it may.
 * `blocked` is expandPrefixes' list, expanded once for all of a send's recipients.
 */
export function geoRefusal(
  blocked: readonly string[],
  countries: CountryList,
  e164: string,
): { rule: 'blocked_prefix' | 'country'; reason: string } | undefined {
  const prefix = blocked.find((candidate) => e164.startsWith(candidate));
  if (prefix) return { rule: 'blocked_prefix', reason: `is in a blocked number range (${prefix})` };
  if (!countryAllowed(countries, e164))
    return { rule: 'country', reason: 'is in a country this workspace does not send to' };
  return undefined;
}

/**
 * Seconds until one more send is within every window, given the recipient's counted sends
 * (epoch seconds, newest first) and now; 0 when one is allowed now.
 */
export function recipientWait(
  windows: readonly SendWindow[],
  recent: readonly number[],
  now: number,
): number {
  let wait = 0;
  for (const window of windows) {
    const inWindow = recent.filter((at) => at > now - window.seconds);
    const limiting = inWindow[window.sends - 1];
    if (limiting !== undefined) wait = Math.max(wait, limiting + window.seconds - now);
  }
  return Math.ceil(wait);
}

/** Whether a range's counted sends and verifications trip the breaker. */
export function breakerTrips(breaker: RangeBreaker, sends: number, verified: number): boolean {
  return sends >= breaker.sends && verified * 100 < breaker.verifiedPercent * sends;
}

// Text forms, as `herald guard set` takes them and `guard show` and the console print them.

const UNITS: Record<string, number> = { s: 1, m: MINUTE, h: HOUR, d: DAY };

/** `15m`, `24h`, `1d`, `30s` → seconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * (UNITS[match[2] as string] as number);
  return seconds > 0 ? seconds : undefined;
}

/** In its largest whole unit, but a day as `24h`, as people write the daily limit (`10/24h`). */
export function formatDuration(seconds: number): string {
  if (seconds % DAY === 0 && seconds > DAY) return `${seconds / DAY}d`;
  for (const [unit, size] of [
    ['h', HOUR],
    ['m', MINUTE],
  ] as const)
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** `5/15m,10/24h` (or `off`) → windows. */
export function parseSendWindows(text: string): SendWindow[] | undefined {
  if (text.trim() === 'off') return [];
  const windows = text.split(',').map((part) => {
    const match = /^(\d{1,6})\/(\w+)$/.exec(part.trim());
    const seconds = match && parseDuration(match[2] as string);
    const sends = Number(match?.[1]);
    return seconds && sends > 0 ? { sends, seconds } : undefined;
  });
  return windows.every((window) => window !== undefined) ? windows : undefined;
}

export function formatSendWindows(windows: readonly SendWindow[]): string {
  return windows.length === 0
    ? 'off'
    : windows.map((window) => `${window.sends}/${formatDuration(window.seconds)}`).join(',');
}

/** `20/1h@10%,1h` (or `off`). */
export function parseRangeBreaker(text: string): RangeBreaker | 'off' | undefined {
  if (text.trim() === 'off') return 'off';
  const match = /^(\d{1,6})\/(\w+)@(\d{1,3}(?:\.\d+)?)%,(\w+)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = parseDuration(match[2] as string);
  const coolDownSeconds = parseDuration(match[4] as string);
  const sends = Number(match[1]);
  const verifiedPercent = Number(match[3]);
  if (!seconds || !coolDownSeconds || sends < 1 || verifiedPercent > 100) return undefined;
  return { sends, seconds, verifiedPercent, coolDownSeconds };
}

export function formatRangeBreaker(breaker: RangeBreaker | 'off'): string {
  if (breaker === 'off') return 'off';
  return `${breaker.sends}/${formatDuration(breaker.seconds)}@${breaker.verifiedPercent}%,${formatDuration(breaker.coolDownSeconds)}`;
}

/** `100/s`, `6000/m` (or `off`). */
export function parseRequestRate(text: string): RequestRate | 'off' | undefined {
  if (text.trim() === 'off') return 'off';
  const match = /^(\d{1,7})\/(s|m)$/.exec(text.trim());
  if (!match || Number(match[1]) < 1) return undefined;
  return { requests: Number(match[1]), perSeconds: match[2] === 's' ? 1 : MINUTE };
}

export function formatRequestRate(rate: RequestRate | 'off'): string {
  if (rate === 'off') return 'off';
  return rate.perSeconds === 1 ? `${rate.requests}/s` : `${rate.requests}/m`;
}

/** `AU,NZ` (or `any`): ISO 3166 alpha-2 codes, upper-cased. */
export function parseCountries(text: string): 'any' | string[] | undefined {
  if (text.trim().toLowerCase() === 'any') return 'any';
  const codes = text.split(',').map((code) => code.trim().toUpperCase());
  return codes.every((code) => /^[A-Z]{2}$/.test(code) && isSupportedCountry(code))
    ? [...new Set(codes)]
    : undefined;
}

export function formatCountries(countries: CountryList): string {
  return countries === 'any' ? 'any' : countries.join(',');
}

/** `+882,+44 70,default` (or `none`): E.164 prefixes, spaces dropped. */
export function parsePrefixes(text: string): string[] | undefined {
  if (text.trim() === 'none') return [];
  const prefixes = text.split(',').map((prefix) => prefix.replaceAll(' ', ''));
  return prefixes.every((prefix) => prefix === DEFAULT_PREFIXES || E164_PREFIX.test(prefix))
    ? [...new Set(prefixes)]
    : undefined;
}

export function formatPrefixes(prefixes: readonly string[]): string {
  return prefixes.length === 0 ? 'none' : prefixes.join(',');
}
