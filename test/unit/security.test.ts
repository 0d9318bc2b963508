import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validationMessage } from '../../domain/errors.js';
import { hashPassword, verifyPassword } from '../../security/password.js';
import {
  findByKeyedHash,
  type HashPurpose,
  issueApiKeyToken,
  isWellFormedApiKeyToken,
  keyedHash,
  matchesKeyedHash,
} from '../../security/tokens.js';

describe('passwords', () => {
  it('stores a salted scrypt PHC string that verifies only the right password', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[^$]+\$[^$]+$/);
    expect(await hashPassword('correct horse battery')).not.toBe(stored);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-phc-string')).toBe(false);
  });
});

describe('API key tokens', () => {
  it('issues well-formed tokens whose public prefix is their start', () => {
    const { token, prefix } = issueApiKeyToken();
    expect(isWellFormedApiKeyToken(token)).toBe(true);
    expect(token.startsWith(`${prefix}_`)).toBe(true);
    expect(isWellFormedApiKeyToken(`${token}x`)).toBe(false);
    expect(isWellFormedApiKeyToken(token.replace('hld_', 'hk_'))).toBe(false);
  });
});

describe('keyed hashes: one key per purpose, derived with HKDF', () => {
  const SECRET = 'a-herald-secret-of-at-least-32-characters';
  /** What every release before per-purpose keys stored: HMAC-SHA256 keyed with the secret. */
  const legacy = (value: string) => createHmac('sha256', SECRET).update(value).digest();
  /** The documented scheme, computed here from node:crypto alone. */
  const derived = (info: string, value: string) =>
    createHmac('sha256', Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), info, 32)))
      .update(value)
      .digest();
  const PURPOSES: [HashPurpose, string][] = [
    ['api-key-hash', 'herald api key hash v2'],
    ['invitation-hash', 'herald invitation hash v2'],
    ['otp-code-hash', 'herald otp code hash v2'],
    ['oauth-token-hash', 'herald oauth token hash v2'],
    ['oauth-code-hash', 'herald oauth code hash v2'],
    ['oauth-client-secret-hash', 'herald oauth client secret hash v2'],
    ['oauth-browser-hash', 'herald oauth browser binding hash v2'],
  ];

  it.each(PURPOSES)('hashes %s under its own HKDF key (info "%s")', (purpose, info) => {
    expect(keyedHash(SECRET, purpose, 'value')).toEqual(derived(info, 'value'));
    expect(keyedHash(SECRET, purpose, 'value')).not.toEqual(legacy('value'));
    expect(keyedHash(`${SECRET}x`, purpose, 'value')).not.toEqual(derived(info, 'value'));
  });

  it('gives every purpose a different hash of the same value', () => {
    const hashes = PURPOSES.map(([purpose]) =>
      keyedHash(SECRET, purpose, '123456').toString('hex'),
    );
    expect(new Set(hashes).size).toBe(PURPOSES.length);
  });

  it('still recognises a hash stored under the legacy key, and only for its value', () => {
    for (const [purpose] of PURPOSES) {
      expect(matchesKeyedHash(SECRET, purpose, '123456', legacy('123456'))).toBe(true);
      expect(
        matchesKeyedHash(SECRET, purpose, '123456', keyedHash(SECRET, purpose, '123456')),
      ).toBe(true);
      expect(matchesKeyedHash(SECRET, purpose, '123457', legacy('123456'))).toBe(false);
      expect(matchesKeyedHash(`${SECRET}x`, purpose, '123456', legacy('123456'))).toBe(false);
    }
    // Another purpose's current hash is not this purpose's.
    const code = keyedHash(SECRET, 'otp-code-hash', '123456');
    expect(matchesKeyedHash(SECRET, 'api-key-hash', '123456', code)).toBe(false);
    expect(matchesKeyedHash(SECRET, 'otp-code-hash', '123456', Buffer.alloc(0))).toBe(false);
  });

  it('finds a row by the current hash first, else by the legacy one, naming the stored hash', async () => {
    const rows = new Map([
      [legacy('old-token').toString('hex'), 'stored before'],
      [keyedHash(SECRET, 'oauth-token-hash', 'new-token').toString('hex'), 'stored since'],
    ]);
    const tried: string[] = [];
    const find = async (hash: Buffer) => {
      tried.push(hash.toString('hex'));
      return rows.get(hash.toString('hex'));
    };
    expect(await findByKeyedHash(SECRET, 'oauth-token-hash', 'new-token', find)).toEqual({
      row: 'stored since',
      storedHash: keyedHash(SECRET, 'oauth-token-hash', 'new-token'),
    });
    expect(tried).toHaveLength(1);
    expect(await findByKeyedHash(SECRET, 'oauth-token-hash', 'old-token', find)).toEqual({
      row: 'stored before',
      storedHash: legacy('old-token'),
    });
    expect(await findByKeyedHash(SECRET, 'oauth-token-hash', 'unknown', find)).toBeUndefined();
  });
});

describe('validation messages', () => {
  it('reports the first error and how many more there are', () => {
    expect(validationMessage({ a: ['A is wrong.'] })).toBe('A is wrong.');
    expect(validationMessage({ a: ['A is wrong.'], b: ['B is wrong.'] })).toBe(
      'A is wrong. (and 1 more error)',
    );
    expect(validationMessage({ a: ['A is wrong.', 'A again.'], b: ['B is wrong.'] })).toBe(
      'A is wrong. (and 2 more errors)',
    );
  });
});
