/**
 * Input no route can use: a NUL character (U+0000) anywhere (path, query, JSON or form body, a
 * key) and JSON nested deeper than any body Herald reads. Every route, MCP and OAuth included,
 * answers a 4xx of its documented shape before its own code runs; none answers 5xx.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { buildApp } from '../../server/app.js';
import { MAX_INPUT_DEPTH } from '../../server/http/input-guard.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const NUL_MESSAGE = 'The request contains a NUL character (U+0000), which Herald does not accept.';

let stack: Stack;
let tenant: Tenant;
let app: FastifyInstance;
const routes: { method: string; url: string }[] = [];

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  app = buildApp(
    {
      env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL, MCP_ENABLED: 'true' }),
      publicUrl: PUBLIC_URL,
      secret: inject('secret'),
      sql: stack.sql,
      temporal: stack.temporal,
    },
    { logger: false },
  );
  app.addHook('onRoute', ({ method, url }) => {
    for (const one of [method].flat()) {
      if (one !== 'HEAD' && one !== 'OPTIONS') routes.push({ method: one, url });
    }
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await stack.close();
});

/** The documented shape of a refusal of unusable input on each kind of route. */
/** The console's pages answer a browser: a 400 page, not JSON (console/plugin.ts). */
const isConsolePage = (url: string) => url.startsWith('/console');

/** A JSON answer as parsed; an HTML page by its heading. */
function answerOf(response: { headers: Record<string, unknown>; body: string; json(): unknown }) {
  if (!String(response.headers['content-type']).startsWith('text/html')) return response.json();
  return { page: /<h1>([^<]*)<\/h1>/.exec(response.body)?.[1] };
}

function expectedRefusal(url: string, field: string) {
  if (isConsolePage(url)) return { status: 400, body: { page: 'Request not accepted' } };
  if (url.startsWith('/api/v1/')) {
    const message = `The ${field.replaceAll('_', ' ')} field must not contain a NUL character.`;
    return { status: 422, body: { message, errors: { [field]: [message] } } };
  }
  if (url.startsWith('/oauth/') || url.startsWith('/mcp/oauth/')) {
    return { status: 400, body: { error: 'invalid_request', error_description: NUL_MESSAGE } };
  }
  return { status: 400, body: { message: NUL_MESSAGE } };
}

const withParams = (url: string, value: string) => url.replace(/:[A-Za-z_]+/g, value);
const authorization = () => ({ authorization: `Bearer ${tenant.token}` });

describe('a NUL character', () => {
  it('in the query string of every route answers its documented 4xx', async () => {
    expect(routes.length).toBeGreaterThan(20);
    for (const { method, url } of routes) {
      const response = await app.inject({
        method: method as 'GET',
        url: `${withParams(url, 'x')}?q=a%00b`,
        headers: authorization(),
      });
      const expected = expectedRefusal(url, 'query.q');
      expect([method, url, response.statusCode, answerOf(response)]).toEqual([
        method,
        url,
        expected.status,
        expected.body,
      ]);
    }
  });

  it('in a path parameter answers its documented 4xx', async () => {
    const parameterised = routes.filter(({ url }) => url.includes(':'));
    expect(parameterised.length).toBeGreaterThan(3);
    for (const { method, url } of parameterised) {
      const name = /:([A-Za-z_]+)/.exec(url)?.[1] as string;
      const response = await app.inject({
        method: method as 'GET',
        url: withParams(url, 'a%00b'),
        headers: authorization(),
      });
      const expected = expectedRefusal(url, `path.${name}`);
      expect([method, url, response.statusCode, answerOf(response)]).toEqual([
        method,
        url,
        expected.status,
        expected.body,
      ]);
    }
  });

  it('in a JSON or form body field, or in a key, of every route that takes a body', async () => {
    const posts = routes.filter(({ method }) => method === 'POST' || method === 'DELETE');
    expect(posts.length).toBeGreaterThan(10);
    for (const { method, url } of posts) {
      const path = withParams(url, 'x');
      const answers = [
        await app.inject({
          method: method as 'POST',
          url: path,
          headers: { ...authorization(), 'content-type': 'application/json' },
          payload: JSON.stringify({ message: 'a\u0000b' }),
        }),
        await app.inject({
          method: method as 'POST',
          url: path,
          headers: { ...authorization(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'message=a%00b',
        }),
      ];
      for (const response of answers) {
        // A route that takes only one kind of body refuses the other with 415 before reading it.
        if (response.statusCode === 415) continue;
        const expected = expectedRefusal(url, 'message');
        expect([method, url, response.statusCode, answerOf(response)]).toEqual([
          method,
          url,
          expected.status,
          expected.body,
        ]);
      }
    }
  });

  it('in a key answers 422 naming it', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { ...authorization(), 'content-type': 'application/json' },
      payload: JSON.stringify({ recipients: ['+61400000000'], message: 'Hi', 'x\u0000': 1 }),
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'The x\u0000 field must not contain a NUL character.',
      errors: { 'x\u0000': ['The x\u0000 field must not contain a NUL character.'] },
    });
  });
});

describe('deeply nested JSON', () => {
  it('with an Idempotency-Key answers 422 at the depth limit, not a stack overflow', async () => {
    const depth = 100_000;
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: {
        ...authorization(),
        'content-type': 'application/json',
        'idempotency-key': `deep-${Date.now()}`,
      },
      // In a key the send ignores, so that only the request hash would ever walk it.
      payload: `{"recipients":["+61400000000"],"message":"Hi","extra":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    });
    const field = `extra${'.0'.repeat(MAX_INPUT_DEPTH - 1)}`;
    const message = `The ${field} field is nested more than ${MAX_INPUT_DEPTH} levels deep.`;
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ message, errors: { [field]: [message] } });
  });

  it('at the limit itself is read as usual', async () => {
    const nested = `${'['.repeat(MAX_INPUT_DEPTH - 1)}"+61400000000"${']'.repeat(MAX_INPUT_DEPTH - 1)}`;
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { ...authorization(), 'content-type': 'application/json' },
      payload: `{"recipients":${nested},"message":"Hi"}`,
    });
    // Past the guard, the send's own validation refuses an array where a number belongs.
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toHaveProperty('recipients.0');
  });
});
