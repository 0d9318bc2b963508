import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  formatDelay,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_DELAYS_MS,
} from '../../domain/webhooks.js';
import {
  nonPublicCategory,
  pinnedLookup,
  resolveWebhookTarget,
  UnsafeUrlError,
} from '../../security/ssrf.js';
import {
  generateWebhookSecret,
  signWebhook,
  webhookHeaders,
} from '../../security/webhook-signature.js';

describe('nonPublicCategory', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.255.0.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.168.0.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'unique local'],
    ['fdff:ffff::1', 'unique local'],
    ['fe80::1%eth0', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['2002:7f00:1::1', 'reserved'],
    ['64:ff9b::7f00:1', 'non-public'],
    ['::7f00:1', 'non-public'],
    ['100::1', 'non-public'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['0:0:0:0:0:ffff:a00:1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:100.64.1.1', 'IPv4-mapped carrier-grade NAT'],
    ['not-an-ip', 'invalid'],
  ])('%s is %s', (address, category) => {
    expect(nonPublicCategory(address)).toBe(category);
  });

  it.each([
    '8.8.8.8',
    '93.184.215.14',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
  ])('%s is public', (address) => {
    expect(nonPublicCategory(address)).toBeUndefined();
  });
});

describe('resolveWebhookTarget', () => {
  const dns = async () => [
    { address: '93.184.215.14', family: 4 as const },
    { address: '2606:4700:4700::1111', family: 6 as const },
  ];

  it('pins the first address of a public host, and an IP literal as it is', async () => {
    expect(
      await resolveWebhookTarget(new URL('https://hooks.example.com/x'), {
        allowPrivate: false,
        resolver: dns,
      }),
    ).toEqual({ address: '93.184.215.14', family: 4 });
    expect(
      await resolveWebhookTarget(new URL('https://[2606:4700:4700::1111]:8443/x'), {
        allowPrivate: false,
        resolver: async () => {
          throw new Error('an IP literal is never looked up');
        },
      }),
    ).toEqual({ address: '2606:4700:4700::1111', family: 6 });
  });

  it('refuses a private address unless allowed, and then still pins it', async () => {
    const url = new URL('http://intranet.example/x');
    const resolver = async () => [{ address: '192.168.7.7', family: 4 as const }];
    const refused = await resolveWebhookTarget(url, { allowPrivate: false, resolver }).catch(
      (error) => error,
    );
    expect(refused).toBeInstanceOf(UnsafeUrlError);
    expect(refused).toMatchObject({
      message: 'intranet.example does not resolve to an allowed address',
      nonPublic: true,
    });
    expect(await resolveWebhookTarget(url, { allowPrivate: true, resolver })).toEqual({
      address: '192.168.7.7',
      family: 4,
    });
  });

  it('refuses a name that does not resolve in the words it uses for a private one', async () => {
    const url = new URL('http://db.corp.example/x');
    const nxdomain = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND db.corp.example'), {
        code: 'ENOTFOUND',
      });
    };
    for (const resolver of [nxdomain, async () => []]) {
      await expect(resolveWebhookTarget(url, { allowPrivate: false, resolver })).rejects.toEqual(
        new UnsafeUrlError('db.corp.example does not resolve to an allowed address', true),
      );
    }
    // With private addresses allowed there is nothing to hide: the resolver's answer is given.
    await expect(
      resolveWebhookTarget(url, { allowPrivate: true, resolver: nxdomain }),
    ).rejects.toMatchObject({
      message: 'db.corp.example does not resolve (ENOTFOUND)',
      nonPublic: false,
    });
  });

  it('answers lookups with the pinned address in both callback forms', () => {
    const lookup = pinnedLookup({ address: '93.184.215.14', family: 4 });
    const calls: unknown[][] = [];
    lookup('evil.example', {}, (...args) => calls.push(args));
    lookup('evil.example', { all: true }, (...args) => calls.push(args));
    expect(calls).toEqual([
      [null, '93.184.215.14', 4],
      [null, [{ address: '93.184.215.14', family: 4 }]],
    ]);
  });
});

describe('Standard Webhooks signatures', () => {
  it('match the official library, which verifies them', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const body = '{"type":"message.sent","timestamp":"2026-01-02T03:04:05.678Z","data":{}}';
    const timestamp = Math.floor(Date.now() / 1000);
    const id = 'msg_0123456789abcdef0123456789abcdef';
    expect(signWebhook(secret, id, timestamp, body)).toBe(
      new Webhook(secret).sign(id, new Date(timestamp * 1000), body),
    );
    const headers = webhookHeaders(secret, id, timestamp, body);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, id, timestamp, body),
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('sent', 'failed'), headers)).toThrow(
      'No matching signature found',
    );
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(
      'No matching signature found',
    );
  });

  it('match the specification example', () => {
    // The worked example of the Standard Webhooks specification (and of its reference libraries).
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(
      signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('the retry schedule', () => {
  it('makes ten attempts over more than three days', () => {
    expect(WEBHOOK_MAX_ATTEMPTS).toBe(10);
    const total = WEBHOOK_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThan(3 * 86_400_000);
    expect(WEBHOOK_RETRY_DELAYS_MS.map(formatDelay)).toEqual([
      '5 s',
      '5 min',
      '30 min',
      '2 h',
      '5 h',
      '10 h',
      '10 h',
      '1 d',
      '1 d',
    ]);
    expect(formatDelay(total)).toBe('3 d 3 h 35 min 5 s');
  });
});
