import { describe, expect, it } from 'vitest';
import { ConfigError, ownProviderUrlOf, parseEnv, publicUrlOf } from '../../config/env.js';

describe('parseEnv', () => {
  it('applies the documented defaults', () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      TEMPORAL_NAMESPACE: 'default',
      MCP_ENABLED: false,
      MCP_ALLOW_DYNAMIC_CLIENTS: true,
      MCP_REDIRECT_URIS: [],
      MCP_DELIVERY_SUMMARY_CACHE_TTL: 30,
      SIMULATOR_PORT: 4010,
      IDEMPOTENCY_KEY_TTL_HOURS: 24,
    });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.TEMPORAL_ADDRESS).toBeUndefined();
  });

  it('treats empty strings as unset', () => {
    const env = parseEnv({ PORT: '', DATABASE_URL: '' });
    expect(env.PORT).toBe(3000);
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it('parses lists and flags', () => {
    const env = parseEnv({
      MCP_ENABLED: 'true',
      MCP_REDIRECT_URIS: 'https://a.example/cb, http://127.0.0.1/callback',
    });
    expect(env.MCP_ENABLED).toBe(true);
    expect(env.MCP_REDIRECT_URIS).toEqual(['https://a.example/cb', 'http://127.0.0.1/callback']);
  });

  it('keeps personal data 90 days by default; 0 keeps it forever; 1 to 6 days are refused', () => {
    expect(parseEnv({}).RETENTION_DAYS).toBe(90);
    expect(parseEnv({ RETENTION_DAYS: '0' }).RETENTION_DAYS).toBe(0);
    expect(parseEnv({ RETENTION_DAYS: '7' }).RETENTION_DAYS).toBe(7);
    for (const days of ['3', '3651', '30.5', 'off'])
      expect(() => parseEnv({ RETENTION_DAYS: days })).toThrow(
        [
          'Invalid environment:',
          '  RETENTION_DAYS: must be 0 (keep forever) or a whole number of days from 7 to 3650',
        ].join('\n'),
      );
  });

  it('names every bad variable in one error', () => {
    const parse = () =>
      parseEnv({
        PORT: 'eighty',
        MCP_ENABLED: 'yes',
        DATABASE_URL: 'mysql://x',
        HERALD_SECRET: 'short',
      });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(
      [
        'Invalid environment:',
        '  PORT: must be a port number',
        '  DATABASE_URL: must be a postgres:// connection URL',
        '  HERALD_SECRET: must be at least 32 characters',
        '  MCP_ENABLED: must be true or false',
      ].join('\n'),
    );
  });
});

describe('URLs derived from HOST', () => {
  // The launcher's simulator listens on HOST: the worker must reach it there, and the api too.
  it.each([
    ['127.0.0.1', 'http://127.0.0.1'],
    ['0.0.0.0', 'http://127.0.0.1'],
    ['::', 'http://[::1]'],
    ['::1', 'http://[::1]'],
    ['10.1.2.3', 'http://10.1.2.3'],
    ['localhost', 'http://localhost'],
  ])('HOST=%s is reached at %s', (host, base) => {
    const env = parseEnv({ HOST: host, PORT: '3000', SIMULATOR_PORT: '4010' });
    expect(ownProviderUrlOf(env)).toBe(`${base}:4010`);
    expect(publicUrlOf(env)).toBe(`${base}:3000`);
    expect(() => new URL('/webhooks/providers/own', publicUrlOf(env))).not.toThrow();
  });

  it('configured URLs win', () => {
    const env = parseEnv({
      HOST: '::',
      PUBLIC_URL: 'https://sms.example.com',
      OWN_PROVIDER_URL: 'http://sms-gateway:8080',
    });
    expect(publicUrlOf(env)).toBe('https://sms.example.com');
    expect(ownProviderUrlOf(env)).toBe('http://sms-gateway:8080');
  });
});
