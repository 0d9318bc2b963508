/**
 * HERALD_SECRET as a key ring (docs/operations.md "Secret rotation"): comma-separated, newest first; the newest
 * key writes, every key reads. Each primitive is checked across a rotation: written under A, read
 * under "B,A", rewritten under B, read under B alone.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv } from '../../config/env.js';
import { openRequest, sealRequest } from '../../mcp/oauth/sealed-request.js';
import { simulator, simulatorCredential } from '../../providers/simulator/definition.js';
import { RECEIPT_SIGNATURE_HEADER, signReceipt } from '../../providers/simulator/signature.js';
import {
  CredentialsError,
  decryptCredentials,
  encryptCredentials,
  reencryptCredentials,
} from '../../security/credentials.js';
import { findByKeyedHash, keyedHash, matchesKeyedHash } from '../../security/tokens.js';

const A = 'key-A-of-the-ring-at-least-32-characters';
const B = 'key-B-of-the-ring-at-least-32-characters';
const ROTATING = `${B},${A}`;
const CONTEXT = 'provider:7:tw';

describe('HERALD_SECRET as a key ring', () => {
  it('accepts a ring whose every key has 32 characters or more', () => {
    expect(parseEnv({ HERALD_SECRET: ROTATING }).HERALD_SECRET).toBe(ROTATING);
  });

  it('refuses a ring with a short key, or an empty one, naming the rule', () => {
    for (const ring of [`${B},short`, `${B},`, `,${A}`]) {
      const parse = () => parseEnv({ HERALD_SECRET: ring });
      expect(parse).toThrow(ConfigError);
      expect(parse).toThrow(
        [
          'Invalid environment:',
          '  HERALD_SECRET: every key of the ring (comma-separated, newest first) must be at least 32 characters',
        ].join('\n'),
      );
    }
  });
});

describe('encrypted credentials across a rotation', () => {
  it('decrypt under every key of the ring, and are re-encrypted under the newest once', () => {
    const underA = encryptCredentials(A, CONTEXT, { authToken: 'tw-token' });
    expect(decryptCredentials(ROTATING, CONTEXT, underA)).toEqual({ authToken: 'tw-token' });

    const underB = reencryptCredentials(ROTATING, CONTEXT, underA) as Buffer;
    expect(underB).toBeInstanceOf(Buffer);
    expect(decryptCredentials(B, CONTEXT, underB)).toEqual({ authToken: 'tw-token' });
    // Idempotent: already under the newest key, nothing to rewrite.
    expect(reencryptCredentials(ROTATING, CONTEXT, underB)).toBeUndefined();
    // Encryption uses the newest key only.
    expect(decryptCredentials(B, CONTEXT, encryptCredentials(ROTATING, CONTEXT, 1))).toBe(1);
  });

  it('refuses a ciphertext under no key of the ring, and one bound to another context', () => {
    const underA = encryptCredentials(A, CONTEXT, 'x');
    expect(() => decryptCredentials(B, CONTEXT, underA)).toThrow(
      new CredentialsError(
        'provider credentials failed authentication: tampered, or encrypted under a key no longer in HERALD_SECRET',
      ),
    );
    expect(() => decryptCredentials(ROTATING, 'provider:7:other', underA)).toThrow(
      CredentialsError,
    );
  });
});

describe('keyed hashes across a rotation', () => {
  it('write under the newest key and find what an older key wrote', async () => {
    expect(keyedHash(ROTATING, 'api-key-hash', 'tok')).toEqual(keyedHash(B, 'api-key-hash', 'tok'));
    const storedUnderA = keyedHash(A, 'otp-code-hash', '123456');
    expect(matchesKeyedHash(ROTATING, 'otp-code-hash', '123456', storedUnderA)).toBe(true);
    expect(matchesKeyedHash(B, 'otp-code-hash', '123456', storedUnderA)).toBe(false);
    expect(matchesKeyedHash(ROTATING, 'otp-code-hash', '654321', storedUnderA)).toBe(false);

    const rows = new Map([[storedUnderA.toString('hex'), 'row under A']]);
    const find = async (hash: Buffer) => rows.get(hash.toString('hex'));
    expect(await findByKeyedHash(ROTATING, 'otp-code-hash', '123456', find)).toEqual({
      row: 'row under A',
      storedHash: storedUnderA,
    });
    expect(await findByKeyedHash(B, 'otp-code-hash', '123456', find)).toBeUndefined();
  });
});

describe('signatures across a rotation', () => {
  it('a sealed OAuth authorization request from before the rotation still opens', () => {
    const request = {
      clientId: 'mcp_client',
      redirectUri: 'http://127.0.0.1/callback',
      state: 's',
      codeChallenge: 'c'.repeat(43),
      resource: 'http://127.0.0.1:3000/mcp',
      scope: 'mcp:use',
    };
    const sealed = sealRequest(A, request, 600);
    expect(openRequest(ROTATING, sealed)).toEqual(openRequest(A, sealed));
    expect(openRequest(ROTATING, sealed)).toBeDefined();
    expect(openRequest(B, sealed)).toBeUndefined();
  });

  it("a simulator receipt signed with the old key's credential still verifies", () => {
    const receipt = {
      id: 'sim-1',
      reference: 'c1-m1',
      status: 'delivered' as const,
      error_code: null,
      at: '2026-11-27T05:00:00.000Z',
    };
    const record = {
      id: 1,
      workspaceId: 7,
      slug: 'sim',
      type: 'simulator',
      active: true,
      requiresSenderId: false,
      messagesPerSecond: null,
      settings: { base_url: 'http://127.0.0.1:1' },
      credentials: null,
    };
    // Submitted under A: the simulator signs its receipt with A's credential.
    const signedUnderA = {
      url: 'http://127.0.0.1:3000/webhooks/providers/sim',
      headers: {
        [RECEIPT_SIGNATURE_HEADER]: signReceipt(simulatorCredential(A, 7, 'sim'), receipt),
      },
      body: receipt,
    };
    const parserUnder = (secret: string) => simulator.create(record, { secret } as never);
    expect(parserUnder(ROTATING).parseReceipt?.(signedUnderA)).toMatchObject({ kind: 'receipt' });
    expect(parserUnder(B).parseReceipt?.(signedUnderA)).toEqual({ kind: 'forbidden' });
  });
});
