/**
 * The vocabulary of request validation, Laravel style: messages keyed by request field, with
 * the attribute's display name (`sender_id` → `sender id`). Pure, so workflows may import it.
 */
import type { FieldErrors } from './errors.js';

export type Fail = (key: string, message: string) => void;

/** An error collector: `fail` records a message, `errors` holds them by field. */
export function collector(): { errors: FieldErrors; fail: Fail } {
  const errors: FieldErrors = {};
  const fail: Fail = (key, message) => {
    errors[key] ??= [];
    errors[key].push(message);
  };
  return { errors, fail };
}

export const label = (key: string): string => key.replaceAll('_', ' ');
export const required = (key: string): string => `The ${label(key)} field is required.`;
export const mustBeString = (key: string): string => `The ${label(key)} field must be a string.`;
export const tooLong = (key: string, max: number): string =>
  `The ${label(key)} field must not be greater than ${max} characters.`;
export const prohibited = (key: string): string => `The ${label(key)} field is prohibited.`;
export const invalidSelection = (key: string): string => `The selected ${label(key)} is invalid.`;

/** Characters as Laravel counts them (mb_strlen): Unicode code points, not UTF-16 units. */
export const characters = (value: string): number => [...value].length;
export const isOmitted = (value: unknown): value is null | undefined =>
  value === undefined || value === null;
export const isOneOf = <T extends string>(value: unknown, allowed: readonly T[]): value is T =>
  (allowed as readonly unknown[]).includes(value);

export const isJsonObject = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body);
export const NOT_AN_OBJECT: FieldErrors = { body: ['The request body must be a JSON object.'] };

const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Null when omitted (or null); null after reporting when not a string. */
export function optionalString(key: string, value: unknown, fail: Fail): string | null {
  if (isOmitted(value)) return null;
  if (typeof value === 'string') return value;
  fail(key, mustBeString(key));
  return null;
}

export function checkSlug(key: string, value: unknown, fail: Fail): string | null {
  const slug = optionalString(key, value, fail);
  if (slug === null || SLUG.test(slug)) return slug;
  fail(key, `The ${label(key)} field format is invalid.`);
  return null;
}

export function checkUuid(key: string, value: unknown, fail: Fail): string | null {
  const uuid = optionalString(key, value, fail);
  if (uuid === null || UUID.test(uuid)) return uuid?.toLowerCase() ?? null;
  fail(key, `The ${label(key)} field must be a valid UUID.`);
  return null;
}

export function checkEnum<T extends string>(
  key: string,
  value: unknown,
  allowed: readonly T[],
  fail: Fail,
): T | null {
  const given = optionalString(key, value, fail);
  if (given === null || isOneOf(given, allowed)) return given;
  fail(key, invalidSelection(key));
  return null;
}

/** An optional integer within [min, max]; JSON numbers only (Laravel's `integer` on JSON input). */
export function checkIntegerBetween(
  key: string,
  value: unknown,
  min: number,
  max: number,
  fail: Fail,
): number | null {
  if (isOmitted(value)) return null;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    fail(key, `The ${label(key)} field must be an integer.`);
    return null;
  }
  if (value < min || value > max) {
    fail(key, `The ${label(key)} field must be between ${min} and ${max}.`);
    return null;
  }
  return value;
}
