import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { purposeKey, purposeKeys } from './keys.js';

/**
 * Provider credentials (and webhook signing secrets) at rest: AES-256-GCM under the
 * `credentials-encryption` key (security/keys.ts: HKDF-SHA256 of HERALD_SECRET, info
 * `herald provider credentials v1`, unchanged since the first release). Layout of the stored bytes:
 *
 *   version (1 byte, 0x01) | nonce (12 random bytes) | ciphertext | GCM tag (16 bytes)
 *
 * `context` (for example `provider:<workspace id>:<slug>`) is bound as additional authenticated
 * data, so a ciphertext copied onto another provider's row does not decrypt there. Decryption
 * throws on any change to the bytes, a different context or a key not in the ring; the error never
 * carries the plaintext. The version byte names no key: decryption tries the ring's keys, newest
 * first (a GCM tag check costs microseconds).
 */
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PURPOSE = 'credentials-encryption';

export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

export function encryptCredentials(secret: string, context: string, value: unknown): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', purposeKey(secret, PURPOSE), nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, ciphertext, cipher.getAuthTag()]);
}

/** The plaintext, and which key of the ring (0: the newest) it was encrypted under. */
export function openCredentials(
  secret: string,
  context: string,
  stored: Uint8Array,
): { value: unknown; keyIndex: number } {
  const bytes = Buffer.from(stored);
  if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION) {
    throw new CredentialsError('provider credentials are not in a known format');
  }
  const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
  const ciphertext = bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const keys = purposeKeys(secret, PURPOSE);
  for (const [keyIndex, key] of keys.entries()) {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      return { value: JSON.parse(plaintext.toString('utf8')), keyIndex };
    } catch {
      // Not this key (or tampered): try the next, older one.
    }
  }
  throw new CredentialsError(
    'provider credentials failed authentication: tampered, or encrypted under a key no longer in HERALD_SECRET',
  );
}

export function decryptCredentials(secret: string, context: string, stored: Uint8Array): unknown {
  return openCredentials(secret, context, stored).value;
}

/**
 * The stored bytes encrypted anew under the ring's newest key, or undefined when they already are
 * (`herald secrets rotate`: running it twice changes nothing the second time).
 */
export function reencryptCredentials(
  secret: string,
  context: string,
  stored: Uint8Array,
): Buffer | undefined {
  const { value, keyIndex } = openCredentials(secret, context, stored);
  return keyIndex === 0 ? undefined : encryptCredentials(secret, context, value);
}

/** The additional authenticated data of a provider's credentials. */
export const providerCredentialsContext = (workspaceId: number, slug: string) =>
  `provider:${workspaceId}:${slug}`;
