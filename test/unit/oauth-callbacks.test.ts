import { describe, expect, it } from 'vitest';
import { callbackPatternProblem, matchesCallbackPattern } from '../../domain/callback-pattern.js';
import { sameCallback } from '../../mcp/oauth/redirect-uris.js';
import { canonicalResource } from '../../mcp/oauth/resource.js';

describe('canonicalResource (RFC 3986 §6.2.2–6.2.3)', () => {
  it.each([
    ['https://herald.example/mcp', 'https://herald.example/mcp'],
    ['HTTPS://Herald.Example/mcp', 'https://herald.example/mcp'],
    ['https://herald.example:443/mcp', 'https://herald.example/mcp'],
    ['http://herald.example:80/mcp', 'http://herald.example/mcp'],
    ['https://herald.example/mcp/', 'https://herald.example/mcp'],
    ['HTTP://127.0.0.1:8080/mcp/', 'http://127.0.0.1:8080/mcp'],
    ['https://herald.example/', 'https://herald.example'],
    ['https://herald.example', 'https://herald.example'],
    ['https://[::1]:443/mcp', 'https://[::1]/mcp'],
  ])('%s is %s', (given, canonical) => {
    expect(canonicalResource(given)).toBe(canonical);
  });

  it.each([
    ['a second trailing slash', 'https://herald.example/mcp//', 'https://herald.example/mcp/'],
    ['another path case', 'https://herald.example/MCP', 'https://herald.example/MCP'],
    ['a non-default port', 'https://herald.example:8443/mcp', 'https://herald.example:8443/mcp'],
    ['https on port 80', 'https://herald.example:80/mcp', 'https://herald.example:80/mcp'],
  ])('keeps %s distinct', (_case, given, canonical) => {
    expect(canonicalResource(given)).toBe(canonical);
  });

  it.each([
    'https://herald.example/mcp#frag',
    'https://herald.example/mcp#',
    'https://user:pw@herald.example/mcp',
    'ftp://herald.example/mcp',
    '/mcp',
    'not a url',
  ])('has no canonical form for %s (RFC 8707 §2: absolute, no fragment)', (given) => {
    expect(canonicalResource(given)).toBeUndefined();
  });
});

describe('sameCallback (RFC 8252 §7.3)', () => {
  const registered = 'http://127.0.0.1:9/callback';

  it.each([
    'http://127.0.0.1:9/callback',
    'http://127.0.0.1:54321/callback',
    'http://127.0.0.1/callback',
    'http://localhost:9/callback',
    'http://localhost:54321/callback',
    'http://[::1]:54321/callback',
  ])('takes %s for %s', (requested) => {
    expect(sameCallback(requested, registered)).toBe(true);
  });

  it.each([
    'http://127.0.0.1:9/other',
    'http://localhost:9/callback?x=1',
    'http://127.0.0.2:9/callback',
    'http://localhost.evil.example:9/callback',
    'https://localhost:9/callback',
    'http://user@localhost:9/callback',
    'http://localhost:9/callback#x',
  ])('refuses %s', (requested) => {
    expect(sameCallback(requested, registered)).toBe(false);
  });

  it('matches HTTPS callbacks exactly', () => {
    expect(sameCallback('https://a.example/cb', 'https://a.example/cb')).toBe(true);
    expect(sameCallback('https://a.example:8443/cb', 'https://a.example/cb')).toBe(false);
    expect(sameCallback('https://A.example/cb', 'https://a.example/cb')).toBe(false);
  });
});

describe('callback patterns (MCP_REDIRECT_URIS entries ending in *)', () => {
  const pattern = 'https://chatgpt.com/connector/oauth/*';

  it.each([
    'https://chatgpt.com/connector/oauth/abc123',
    'https://chatgpt.com/connector/oauth/abc/123',
    'https://chatgpt.com/connector/oauth/abc?x=1',
    'https://chatgpt.com/connector/oauth/',
  ])('%s matches', (uri) => {
    expect(matchesCallbackPattern(uri, pattern)).toBe(true);
  });

  it.each([
    'https://chatgpt.com/connector/oauthx',
    'https://chatgpt.com/connector/oauth',
    'https://evil.com/connector/oauth/abc',
    'https://chatgpt.com.evil.com/connector/oauth/abc',
    'https://chatgpt.com:8443/connector/oauth/abc',
    'http://chatgpt.com/connector/oauth/abc',
    'https://chatgpt.com/connector/oauth/../../evil',
    'https://chatgpt.com/connector/oauth/%2e%2e/evil',
    'https://chatgpt.com/connector/oauth/..%2Fevil',
    'https://chatgpt.com/connector/oauth/..%5cevil',
    'https://chatgpt.com/connector/oauth/..\\evil',
    'https://CHATGPT.com/connector/oauth/abc',
    'https://chatgpt.com:443/connector/oauth/abc',
    'https://u:p@chatgpt.com/connector/oauth/abc',
    'https://chatgpt.com/connector/oauth/abc#x',
    'not a url',
  ])('%s does not match', (uri) => {
    expect(matchesCallbackPattern(uri, pattern)).toBe(false);
  });

  it('is never a pattern without a trailing *', () => {
    expect(matchesCallbackPattern('https://a.example/cb', 'https://a.example/cb')).toBe(false);
  });

  it.each([
    'https://chatgpt.com/connector/oauth/*',
    'https://chatgpt.com/*',
    'https://a.example/cb',
    'http://127.0.0.1/callback',
  ])('takes %s', (entry) => {
    expect(callbackPatternProblem(entry)).toBeUndefined();
  });

  it.each([
    ['http://127.0.0.1/*', 'a * is allowed only on an https:// callback'],
    ['https://*.example.com/cb', 'a * may only end the path, after a /'],
    ['https://a.example/cb*', 'a * may only end the path, after a /'],
    ['https://a.example/*/cb', 'a * may only end the path, after a /'],
    ['https://a.example/cb?x=*', 'a * may only end the path, after a /'],
    ['https://a.example/**', 'a * may only end the path, after a /'],
    ['https://a.example/cb?x=/*', 'a * may only end the path, after a /'],
  ])('refuses %s', (entry, reason) => {
    expect(callbackPatternProblem(entry)).toBe(
      `${entry}: ${reason}, as in https://chatgpt.com/connector/oauth/*`,
    );
  });
});
