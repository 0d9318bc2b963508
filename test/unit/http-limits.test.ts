import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv } from '../../config/env.js';
import { addressListOf, httpTimeoutOptions } from '../../server/http/connection-guard.js';

describe('the api connection settings (issue 24 item 3)', () => {
  it('default to 5 s for headers, 10 s for a request, 72 s of keep-alive, 512 per address', () => {
    const env = parseEnv({});
    expect(httpTimeoutOptions(env)).toEqual({
      requestTimeout: 10_000,
      keepAliveTimeout: 72_000,
      http: {
        headersTimeout: 5_000,
        requestTimeout: 10_000,
        keepAliveTimeout: 72_000,
        connectionsCheckingInterval: 1_000,
      },
    });
    expect(env.HTTP_MAX_CONNECTIONS_PER_ADDRESS).toBe(512);
  });

  it('checks for expired requests every quarter of a short headers timeout', () => {
    const env = parseEnv({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2500' });
    expect(httpTimeoutOptions(env).http.connectionsCheckingInterval).toBe(250);
  });

  it.each([
    [
      { HTTP_HEADERS_TIMEOUT_MS: '999' },
      'HTTP_HEADERS_TIMEOUT_MS: must be a whole number of milliseconds from 1000 to 60000',
    ],
    [
      { HTTP_REQUEST_TIMEOUT_MS: '2.5' },
      'HTTP_REQUEST_TIMEOUT_MS: must be a whole number of milliseconds from 1000 to 300000',
    ],
    [
      { HTTP_KEEP_ALIVE_TIMEOUT_MS: 'soon' },
      'HTTP_KEEP_ALIVE_TIMEOUT_MS: must be a whole number of milliseconds from 1000 to 600000',
    ],
    [
      { HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' },
      'HTTP_MAX_CONNECTIONS_PER_ADDRESS: must be a whole number from 1 to 100000',
    ],
    [
      { HTTP_HEADERS_TIMEOUT_MS: '6000', HTTP_REQUEST_TIMEOUT_MS: '5000' },
      'HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS',
    ],
  ])('refuses %j', (variables, problem) => {
    expect(() => parseEnv(variables)).toThrow(
      new ConfigError(`Invalid environment:\n  ${problem}`),
    );
  });

  it('exempts TRUSTED_PROXIES from the cap, named ranges and IPv4-mapped sockets included', () => {
    const trusted = addressListOf(['10.1.0.0/16', '192.168.1.7', 'fd00::/8', 'loopback']);
    const check = (address: string) =>
      trusted.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
    expect(
      ['10.1.2.3', '::ffff:10.1.2.3', '192.168.1.7', 'fd00::1', '127.0.0.5', '::1'].map(check),
    ).toEqual([true, true, true, true, true, true]);
    expect(['10.2.0.1', '192.168.1.8', 'fe80::1', '8.8.8.8'].map(check)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
