import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv } from '../../config/env.js';

describe('TRUSTED_PROXIES', () => {
  it('is empty by default: X-Forwarded-For is believed from nobody', () => {
    expect(parseEnv({}).TRUSTED_PROXIES).toEqual([]);
  });

  it('reads addresses, CIDR ranges and the named ranges, comma-separated', () => {
    expect(
      parseEnv({ TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.7,fd00::/8 , ::1, loopback' })
        .TRUSTED_PROXIES,
    ).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1', 'loopback']);
  });

  it.each(['proxy.example', '10.0.0.0/33', '10.0.0.1/8/8', '300.1.1.1', '::1/129', '*'])(
    'refuses %s',
    (entry) => {
      expect(() => parseEnv({ TRUSTED_PROXIES: `10.0.0.1, ${entry}` })).toThrow(
        new ConfigError(
          'Invalid environment:\n  TRUSTED_PROXIES: must be a comma-separated list of IP addresses or CIDR ranges',
        ),
      );
    },
  );
});
