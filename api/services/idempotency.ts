import { createHash } from 'node:crypto';
import { validationError } from '../../domain/errors.js';

const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/** The Idempotency-Key header: up to 255 printable ASCII characters, or absent. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw validationError({
      'Idempotency-Key': [
        'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      ],
    });
  }
  return header;
}

/** Serialises with sorted keys, so the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(body: unknown): Buffer {
  return createHash('sha256').update(canonical(body)).digest();
}
