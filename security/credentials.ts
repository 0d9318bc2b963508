import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from 'node:crypto';
import { purposeKey } from './keys.js';

/**
 * Provider credentials (and webhook signing secrets) at rest: AES-256-GCM under the
 * `credentials-encryption` key (security/keys.ts: HKDF-SHA256 of HERALD_SECRET, info
 * `herald provider credentials v1`, unchanged since the first release). Layout of the stored bytes:
 *
 *   version (1 byte, 0x01) | nonce (12 random bytes) | ciphertext | GCM tag (16 bytes)
 *
 * `context` (for example `provider:<workspace id>:<slug>`) is bound as additional authenticated
 * data, so a ciphertext copied onto another provider's row does not decrypt there. Decryption
 * throws on any change to the bytes, a different context or a different secret; the error never
 * carries the plaintext.
 */
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

function keyFor(secret: string): KeyObject {
  return purposeKey(secret, 'credentials-encryption');
}

export function encryptCredentials(secret: string, context: string, value: unknown): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret), nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, ciphertext, cipher.getAuthTag()]);
}

export function decryptCredentials(secret: string, context: string, stored: Uint8Array): unknown {
  const bytes = Buffer.from(stored);
  if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION) {
    throw new CredentialsError('provider credentials are not in a known format');
  }
  const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
  const ciphertext = bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', keyFor(secret), nonce);
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  let plaintext: string;
  try {
    plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new CredentialsError(
      'provider credentials failed authentication: tampered, or encrypted under another HERALD_SECRET',
    );
  }
  return JSON.parse(plaintext);
}

/** The additional authenticated data of a provider's credentials. */
export const providerCredentialsContext = (workspaceId: number, slug: string) =>
  `provider:${workspaceId}:${slug}`;
