import { createHmac, randomBytes } from 'node:crypto';
import { OPT_OUT_TOKEN_LENGTH } from '../domain/opt-out.js';

/**
 * API key tokens look like `hld_<prefix>_<secret>`. The prefix is public (shown in listings);
 * only an HMAC of the whole token, keyed with HERALD_SECRET, is stored.
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

/** Keyed hash used for every secret Herald must recognise but never store (API keys, codes). */
export function keyedHash(secret: string, value: string): Buffer {
  return createHmac('sha256', secret).update(value).digest();
}

/** An invitation token, `hli_<secret>`: sent to the invitee once, stored only as a keyed hash. */
export function issueInvitationToken(): string {
  return `hli_${randomBytes(32).toString('base64url')}`;
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
