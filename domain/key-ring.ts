/**
 * HERALD_SECRET is a key ring: one key, or several separated by commas, newest first. The newest
 * key encrypts, signs and hashes everything written from now on; every key in the ring still
 * decrypts, verifies and finds what was written under it (docs/operations.md "Secret rotation").
 */
export const RING_SEPARATOR = ',';
export const MIN_KEY_LENGTH = 32;

const rings = new Map<string, readonly string[]>();

/** The ring's keys, newest first (split once per distinct HERALD_SECRET). */
export function ringKeys(secret: string): readonly string[] {
  let keys = rings.get(secret);
  if (!keys) {
    keys = Object.freeze(secret.split(RING_SEPARATOR));
    rings.set(secret, keys);
  }
  return keys;
}

/** The key everything new is written under. */
export function newestKey(secret: string): string {
  return ringKeys(secret)[0] as string;
}

/** Why a HERALD_SECRET is not a usable ring, or undefined when it is. */
export function ringProblem(secret: string): string | undefined {
  const keys = secret.split(RING_SEPARATOR);
  if (keys.every((key) => key.length >= MIN_KEY_LENGTH)) return undefined;
  return keys.length === 1
    ? `must be at least ${MIN_KEY_LENGTH} characters`
    : `every key of the ring (comma-separated, newest first) must be at least ${MIN_KEY_LENGTH} characters`;
}
