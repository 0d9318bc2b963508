import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv } from '../../config/env.js';

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
