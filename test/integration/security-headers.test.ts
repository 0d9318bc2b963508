/** Headers every answer carries, and the page policy on Herald's HTML pages. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_POLICY } from '../../api/security-headers.js';
import { openStack, type Stack } from '../support/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await openStack();
});

afterAll(async () => {
  await stack.close();
});

describe('security headers', () => {
  it('forbid sniffing and referrers on a JSON answer, without a page policy', async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/health' });
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.headers['content-security-policy']).toBeUndefined();
  });

  it('put the page policy and no framing on an opt-out page', async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/o/no-such-token' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(PAGE_POLICY);
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it("keep the API docs page's own policy, which lets its script read openapi.json", async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(response.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'unsafe-inline'; connect-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response.headers['x-frame-options']).toBe('DENY');
  });
});
