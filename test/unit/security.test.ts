import { describe, expect, it } from 'vitest';
import { validationMessage } from '../../domain/errors.js';
import { hashPassword, verifyPassword } from '../../security/password.js';
import { issueApiKeyToken, isWellFormedApiKeyToken, keyedHash } from '../../security/tokens.js';

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

  it('hashes with the secret as key', () => {
    expect(keyedHash('secret-a', 'token')).not.toEqual(keyedHash('secret-b', 'token'));
    expect(keyedHash('secret-a', 'token')).toEqual(keyedHash('secret-a', 'token'));
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
