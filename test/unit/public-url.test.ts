import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv, publicUrlOf } from '../../config/env.js';

const INSECURE_IN_PRODUCTION = [
  'Invalid environment:',
  '  PUBLIC_URL: must be https:// when NODE_ENV=production (sign-in, OAuth codes and tokens travel through it; MCP requires HTTPS); set ALLOW_INSECURE_PUBLIC_URL=true to run on plain http anyway',
].join('\n');

const WITH_PATH =
  '  PUBLIC_URL: must be an origin without a path, query or fragment (e.g. https://herald.example.com): Herald serves at the root of its host, where OAuth discovery (RFC 8414, RFC 9728) looks; give it a host of its own';

describe('PUBLIC_URL in production', () => {
  it('must be https', () => {
    for (const url of ['http://herald.example.com', 'HTTP://herald.example.com/']) {
      const parse = () => parseEnv({ NODE_ENV: 'production', PUBLIC_URL: url });
      expect(parse).toThrow(ConfigError);
      expect(parse).toThrow(INSECURE_IN_PRODUCTION);
    }
    expect(
      parseEnv({ NODE_ENV: 'production', PUBLIC_URL: 'https://herald.example.com' }),
    ).toMatchObject({
      PUBLIC_URL: 'https://herald.example.com',
      ALLOW_INSECURE_PUBLIC_URL: false,
    });
  });

  it('may be http when ALLOW_INSECURE_PUBLIC_URL=true says so, or outside production', () => {
    const env = parseEnv({
      NODE_ENV: 'production',
      PUBLIC_URL: 'http://herald.internal:3000',
      ALLOW_INSECURE_PUBLIC_URL: 'true',
    });
    expect(publicUrlOf(env)).toBe('http://herald.internal:3000');
    expect(publicUrlOf(parseEnv({ PUBLIC_URL: 'http://127.0.0.1:3000' }))).toBe(
      'http://127.0.0.1:3000',
    );
    expect(() => parseEnv({ NODE_ENV: 'production', ALLOW_INSECURE_PUBLIC_URL: 'maybe' })).toThrow(
      'Invalid environment:\n  ALLOW_INSECURE_PUBLIC_URL: must be true or false',
    );
  });

  it('must be set for the api and worker, whose default is plain http', () => {
    const env = parseEnv({ NODE_ENV: 'production', HOST: '0.0.0.0' });
    expect(() => publicUrlOf(env)).toThrow(ConfigError);
    expect(() => publicUrlOf(env)).toThrow(
      'Invalid environment:\n  PUBLIC_URL: required when NODE_ENV=production (the https:// address clients reach Herald at)',
    );
    expect(
      publicUrlOf(parseEnv({ NODE_ENV: 'production', ALLOW_INSECURE_PUBLIC_URL: 'true' })),
    ).toBe('http://127.0.0.1:3000');
  });
});

describe('PUBLIC_URL with a path', () => {
  it.each([
    'https://example.com/herald',
    'https://example.com/herald/',
    'https://example.com/?tenant=1',
    'https://example.com/#top',
  ])('refuses %s: discovery would need a path prefix Herald does not serve', (url) => {
    expect(() => parseEnv({ PUBLIC_URL: url })).toThrow(`Invalid environment:\n${WITH_PATH}`);
  });

  it.each(['https://example.com', 'https://example.com/', 'http://127.0.0.1:3000'])(
    'takes %s',
    (url) => {
      expect(parseEnv({ PUBLIC_URL: url }).PUBLIC_URL).toBe(url);
    },
  );

  it('reports the path of an http URL with a path in production', () => {
    expect(() =>
      parseEnv({ NODE_ENV: 'production', PUBLIC_URL: 'http://example.com/herald' }),
    ).toThrow(`Invalid environment:\n${WITH_PATH}`);
  });
});

describe('MCP_REDIRECT_URIS patterns', () => {
  it('takes an https prefix ending in *', () => {
    expect(
      parseEnv({ MCP_REDIRECT_URIS: 'https://chatgpt.com/connector/oauth/*, http://127.0.0.1/cb' })
        .MCP_REDIRECT_URIS,
    ).toEqual(['https://chatgpt.com/connector/oauth/*', 'http://127.0.0.1/cb']);
  });

  it('refuses a * on http or anywhere but the end of the path, naming the entry', () => {
    expect(() =>
      parseEnv({
        MCP_REDIRECT_URIS: 'http://127.0.0.1/*, https://*.example.com/cb, https://a.example/ok',
      }),
    ).toThrow(
      [
        'Invalid environment:',
        '  MCP_REDIRECT_URIS: http://127.0.0.1/*: a * is allowed only on an https:// callback, as in https://chatgpt.com/connector/oauth/*',
        '  MCP_REDIRECT_URIS: https://*.example.com/cb: a * may only end the path, after a /, as in https://chatgpt.com/connector/oauth/*',
      ].join('\n'),
    );
  });
});
