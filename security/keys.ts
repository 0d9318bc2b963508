import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { newestKey, ringKeys } from '../domain/key-ring.js';

/**
 * Every key Herald uses is derived from a key of HERALD_SECRET's ring (domain/key-ring.ts) with
 * HKDF-SHA256, one key per purpose, so a value hashed, signed or encrypted for one purpose means
 * nothing for another. The info strings are part of the stored data's format: changing one
 * orphans what was stored under it.
 */
const INFO = {
  'api-key-hash': 'herald api key hash v2',
  'invitation-hash': 'herald invitation hash v2',
  'otp-code-hash': 'herald otp code hash v2',
  'oauth-token-hash': 'herald oauth token hash v2',
  'oauth-code-hash': 'herald oauth code hash v2',
  'oauth-client-secret-hash': 'herald oauth client secret hash v2',
  'oauth-browser-hash': 'herald oauth browser binding hash v2',
  /** Kept from the first release: provider credentials and webhook secrets are stored under it. */
  'credentials-encryption': 'herald provider credentials v1',
  'provider-receipt-signing': 'herald provider receipt signing v1',
  /** Failed sign-ins are counted by a keyed hash of the account or address (kept 1 day). */
  'sign-in-throttle-hash': 'herald sign-in throttle subject hash v1',
  /** Signs an authorization request carried by the sign-in form (nothing stored before sign-in). */
  'oauth-request-signing': 'herald oauth authorization request signing v1',
  /** Derives a refresh token's successor pair from it, so a retried refresh gets the same pair. */
  'oauth-refresh-successor': 'herald oauth refresh successor v1',
  /** An erased recipient's opt-out is kept as a keyed hash of the number (db/recipient-erasure.ts). */
  'recipient-hash': 'herald recipient hash v1',
  /** A one-time password reset link an owner or admin issues for a member (db/passwords.ts). */
  'password-reset-hash': 'herald password reset hash v1',
} as const;

export type KeyPurpose = keyof typeof INFO;

/**
 * Derived once per key and purpose (HKDF on every request cost the api 3 % of its CPU), and
 * handed out as a KeyObject, which no caller can change under the others.
 */
const derived = new Map<string, KeyObject>();

function derive(key: string, purpose: KeyPurpose): KeyObject {
  const name = `${purpose}\0${key}`;
  let derivedKey = derived.get(name);
  if (!derivedKey) {
    derivedKey = createSecretKey(
      Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), INFO[purpose], 32)),
    );
    derived.set(name, derivedKey);
  }
  return derivedKey;
}

/** The 32-byte key of one purpose under the ring's newest key: what writes and signs. */
export function purposeKey(secret: string, purpose: KeyPurpose): KeyObject {
  return derive(newestKey(secret), purpose);
}

/** The purpose's key under every key of the ring, newest first: what reads and verifies. */
export function purposeKeys(secret: string, purpose: KeyPurpose): KeyObject[] {
  return ringKeys(secret).map((key) => derive(key, purpose));
}

function receiptKey(purposeKeyOfOneKey: KeyObject, context: string): string {
  return createHmac('sha256', purposeKeyOfOneKey).update(context).digest('base64url');
}

/**
 * The secret with which one workspace provider signs the delivery receipts it posts (simulator
 * protocol): derived, so nothing is stored, every Herald process knows it, and it changes with
 * HERALD_SECRET's newest key. `context` names the provider (security/credentials.ts
 * providerCredentialsContext).
 */
export function providerReceiptKey(secret: string, context: string): string {
  return receiptKey(purposeKey(secret, 'provider-receipt-signing'), context);
}

/**
 * The receipt keys of every key in the ring, newest first: a message submitted before a rotation
 * is signed with the key of its time, and its receipt still verifies.
 */
export function providerReceiptKeys(secret: string, context: string): string[] {
  return purposeKeys(secret, 'provider-receipt-signing').map((key) => receiptKey(key, context));
}
