import { hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CredentialsError,
  decryptCredentials,
  encryptCredentials,
} from '../../security/credentials.js';
import { purposeKey } from '../../security/keys.js';

const SECRET = 'a-herald-secret-of-at-least-32-characters';
const CONTEXT = 'provider:1:tw';
const VALUE = { account_sid: 'AC123', auth_token: 'very-secret-token' };

describe('provider credentials at rest (AES-256-GCM, HKDF from HERALD_SECRET)', () => {
  it('round-trips, with a fresh nonce each time and no plaintext in the bytes', () => {
    const first = encryptCredentials(SECRET, CONTEXT, VALUE);
    const second = encryptCredentials(SECRET, CONTEXT, VALUE);
    expect(decryptCredentials(SECRET, CONTEXT, first)).toEqual(VALUE);
    expect(first.equals(second)).toBe(false);
    expect(first[0]).toBe(1);
    expect(first.toString('latin1')).not.toContain('very-secret-token');
    // version + 12-byte nonce + ciphertext + 16-byte tag
    expect(first.length).toBe(1 + 12 + Buffer.byteLength(JSON.stringify(VALUE)) + 16);
  });

  it('fails loudly on any flipped byte, another secret, another provider or an unknown version', () => {
    const stored = encryptCredentials(SECRET, CONTEXT, VALUE);
    for (let index = 1; index < stored.length; index += 7) {
      const tampered = Buffer.from(stored);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expect(() => decryptCredentials(SECRET, CONTEXT, tampered)).toThrow(CredentialsError);
    }
    expect(() => decryptCredentials(`${SECRET}x`, CONTEXT, stored)).toThrow(CredentialsError);
    expect(() => decryptCredentials(SECRET, 'provider:2:tw', stored)).toThrow(CredentialsError);
    const future = Buffer.from(stored);
    future[0] = 2;
    expect(() => decryptCredentials(SECRET, CONTEXT, future)).toThrow(
      new CredentialsError('provider credentials are not in a known format'),
    );
    expect(() => decryptCredentials(SECRET, CONTEXT, stored.subarray(0, 20))).toThrow(
      CredentialsError,
    );
  });

  it('decrypts what the first release stored: its key is the credentials purpose key, unchanged', () => {
    // Made by security/credentials.ts before keys were derived in security/keys.ts.
    const stored = Buffer.from(
      'AXXdt9eIQ76STwUhaWkg5yt4B/D+2K3MqiRD392RLd8LHI1Ew8YdJeo7ut37XAP6ZY2Uy9Iv0omLvraj/cz62TyQ6ZaFQ5R0jlpV+YuU72H2kBKVIQ==',
      'base64',
    );
    expect(decryptCredentials(SECRET, CONTEXT, stored)).toEqual(VALUE);
    expect(purposeKey(SECRET, 'credentials-encryption').export()).toEqual(
      Buffer.from(
        hkdfSync('sha256', SECRET, Buffer.alloc(0), 'herald provider credentials v1', 32),
      ),
    );
  });

  it('never puts the plaintext in an error', () => {
    const stored = encryptCredentials(SECRET, CONTEXT, VALUE);
    try {
      decryptCredentials('wrong', CONTEXT, stored);
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('very-secret-token');
    }
  });
});
