/** Headers every answer carries, and the page policy on Herald's HTML pages. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_POLICY } from '../../server/http/security-headers.js';
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

  it("keep the API reference's own policy: its scripts and styles from this origin only", async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(response.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response.headers['x-frame-options']).toBe('DENY');
  });
});
