import { describe, expect, it } from 'vitest';
import { optOutUrl, renderOptOutLink, replyKeyword } from '../../domain/opt-out.js';
import { campaignSegments } from '../../domain/segments.js';
import { newOptOutToken } from '../../security/tokens.js';

describe('reply keywords', () => {
  it.each([
    ['STOP', 'stop'],
    [' stop ', 'stop'],
    ['Stop.', 'stop'],
    ['UNSUBSCRIBE', 'stop'],
    ['stopall', 'stop'],
    ['cancel', 'stop'],
    ['END', 'stop'],
    ['quit', 'stop'],
    ['START', 'start'],
    ['unstop', 'start'],
    ['Yes!', 'start'],
    ['HELP', 'help'],
    ['info.', 'help'],
  ])('reads %j as %s', (body, keyword) => {
    expect(replyKeyword(body)).toBe(keyword);
  });

  it.each(['please stop texting me', 'STOP IT', 'stopp', '', 'Thanks', 'help me'])(
    'ignores %j: only the whole reply counts',
    (body) => {
      expect(replyKeyword(body)).toBeNull();
    },
  );
});

describe('opt-out links', () => {
  it('are PUBLIC_URL/o/<10 base62 characters>', () => {
    const token = newOptOutToken();
    expect(token).toMatch(/^[0-9A-Za-z]{10}$/);
    expect(optOutUrl('https://sms.example.com/', token)).toBe(`https://sms.example.com/o/${token}`);
    expect(new Set(Array.from({ length: 1000 }, () => newOptOutToken())).size).toBe(1000);
  });

  it('replace the placeholder at the length they will have when sent', () => {
    expect(renderOptOutLink('Stop: {opt_out_url}', 'https://a.example')).toBe(
      'Stop: https://a.example/o/xxxxxxxxxx',
    );
    // 130 + 1 + 13 = 144 characters as written; 130 + 1 + 36 = 167 as sent: two segments.
    const body = `${'a'.repeat(130)} {opt_out_url}`;
    expect(campaignSegments(body, 'https://sms.example.com')).toBe(2);
    expect(campaignSegments(body.replace('{opt_out_url}', ''), 'https://sms.example.com')).toBe(1);
  });
});
