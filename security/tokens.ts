import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ringKeys } from '../domain/key-ring.js';
import { OPT_OUT_TOKEN_LENGTH } from '../domain/opt-out.js';
import { type KeyPurpose, purposeKey, purposeKeys } from './keys.js';

/**
 * API key tokens look like `hld_<prefix>_<secret>`. The prefix is public (shown in listings);
 * only a keyed hash of the whole token (keyedHash, purpose `api-key-hash`) is stored.
 */
const TOKEN_PATTERN = /^hld_([a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;

export interface IssuedToken {
  token: string;
  prefix: string;
}

export function issueApiKeyToken(): IssuedToken {
  const prefix = randomBytes(5).toString('hex').slice(0, 8);
  const token = `hld_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { token, prefix: `hld_${prefix}` };
}

export function isWellFormedApiKeyToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** What a keyed hash is of: each has its own key (security/keys.ts). */
export type HashPurpose = Extract<
  KeyPurpose,
  | 'api-key-hash'
  | 'invitation-hash'
  | 'otp-code-hash'
  | 'oauth-token-hash'
  | 'oauth-code-hash'
  | 'oauth-client-secret-hash'
  | 'oauth-browser-hash'
  | 'recipient-hash'
  | 'password-reset-hash'
>;

/**
 * The keyed hash Herald stores for a secret it must recognise but never keep (API keys, codes,
 * tokens): HMAC-SHA256 under the purpose's own key, derived from HERALD_SECRET's newest key.
 */
export function keyedHash(secret: string, purpose: HashPurpose, value: string): Buffer {
  return createHmac('sha256', purposeKey(secret, purpose)).update(value).digest();
}

/**
 * The first scheme, HMAC-SHA256 keyed with HERALD_SECRET itself for every purpose. Hashes stored
 * before per-purpose keys are still recognised (keyedHashCandidates); none is written any more.
 */
function legacyKeyedHash(key: string, value: string): Buffer {
  return createHmac('sha256', key).update(value).digest();
}

/**
 * The hashes a stored row of `value` may carry: the current scheme's under each key of the ring,
 * newest first (so the first is the one written now), then the legacy scheme's under each key.
 */
export function keyedHashCandidates(
  secret: string,
  purpose: HashPurpose,
  value: string,
): [Buffer, ...Buffer[]] {
  const [newest, ...older] = purposeKeys(secret, purpose).map((key) =>
    createHmac('sha256', key).update(value).digest(),
  );
  return [
    newest as Buffer,
    ...older,
    ...ringKeys(secret).map((key) => legacyKeyedHash(key, value)),
  ];
}

/** Whether `stored` is a hash of `value` under any key and scheme; constant time, all computed. */
export function matchesKeyedHash(
  secret: string,
  purpose: HashPurpose,
  value: string,
  stored: Uint8Array,
): boolean {
  let matches = false;
  for (const candidate of keyedHashCandidates(secret, purpose, value)) {
    const same = candidate.length === stored.length && timingSafeEqual(candidate, stored);
    matches = same || matches;
  }
  return matches;
}

/**
 * A row looked up by the keyed hash of `value`: under the newest key's current scheme, else under
 * older keys and the legacy scheme. `storedHash` is the hash the row is stored under (the one to
 * update or revoke it by).
 */
export async function findByKeyedHash<T>(
  secret: string,
  purpose: HashPurpose,
  value: string,
  find: (hash: Buffer) => Promise<T | undefined>,
): Promise<{ row: T; storedHash: Buffer } | undefined> {
  for (const hash of keyedHashCandidates(secret, purpose, value)) {
    const row = await find(hash);
    if (row !== undefined) return { row, storedHash: hash };
  }
  return undefined;
}

/** An invitation token, `hli_<secret>`: sent to the invitee once, stored only as a keyed hash. */
export function issueInvitationToken(): string {
  return `hli_${randomBytes(32).toString('base64url')}`;
}

/** A password reset token, `hlr_<secret>`: shown to the issuing admin once, stored only as a keyed hash. */
export function issuePasswordResetToken(): string {
  return `hlr_${randomBytes(32).toString('base64url')}`;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The token of an opt-out link: short enough to keep the link cheap in an SMS, random enough that
 * links cannot be guessed (10 base62 characters, rejection-sampled so each is uniform).
 */
export function newOptOutToken(length = OPT_OUT_TOKEN_LENGTH): string {
  let token = '';
  while (token.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && token.length < length) token += BASE62[byte % 62];
    }
  }
  return token;
}
