import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStack, type Stack } from '../support/stack.js';

/**
 * Every request body and every answer in the OpenAPI document carries an example (the rendered
 * reference at /api/v1/docs shows them), and each example is valid against the schema beside it.
 * ajv is fastify's own validator (its dependency), so no validator is added for this.
 */

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON.
type Json = any;

let stack: Stack;
let doc: Json;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

beforeAll(async () => {
  stack = await openStack();
  doc = (await stack.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});

afterAll(() => stack.close());

/** A media type object's examples: its `example`, or the values of its `examples`. */
function examplesOf(media: Json): unknown[] {
  if (media?.example !== undefined) return [media.example];
  return Object.values(media?.examples ?? {}).map((example) => (example as Json).value);
}

/** Validates against the media type's schema; `#/components/...` references resolve in `doc`. */
function problemsOf(schema: Json, example: unknown): string | undefined {
  const validate = ajv.compile({ ...schema, components: doc.components });
  return validate(example) ? undefined : ajv.errorsText(validate.errors);
}

/** Every operation's request body and answers: `post /api/v1/messages 202` → its media type. */
function mediaTypes(): [string, Json][] {
  const found: [string, Json][] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const body = operation.requestBody?.content?.['application/json'];
      if (operation.requestBody) found.push([`${method} ${path} request`, body]);
      for (const [status, response] of Object.entries<Json>(operation.responses))
        found.push([`${method} ${path} ${status}`, response.content?.['application/json']]);
    }
  }
  return found;
}

describe('OpenAPI examples', () => {
  it('are given for every request body and every status of every operation', () => {
    const all = mediaTypes();
    expect(all.length).toBeGreaterThan(60);
    const without = all.filter(([, media]) => examplesOf(media).length === 0).map(([at]) => at);
    expect(without).toEqual([]);
  });

  it('are each valid against their own schema', () => {
    const invalid = mediaTypes().flatMap(([at, media]) =>
      examplesOf(media).flatMap((example) => {
        const problems = problemsOf(media.schema, example);
        return problems ? [`${at}: ${problems}`] : [];
      }),
    );
    expect(invalid).toEqual([]);
  });

  it('would be caught if wrong: a 401 example without its message is refused', () => {
    const unauthenticated = doc.paths['/api/v1/messages'].post.responses['401'];
    const schema = unauthenticated.content['application/json'].schema;
    expect(problemsOf(schema, { error: 'Unauthenticated.' })).toBe(
      "data must have required property 'message', data must NOT have additional properties",
    );
  });

  it('show the error shapes as Herald sends them: a 401 is the example exactly', async () => {
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      payload: {},
    });
    expect(response.statusCode).toBe(401);
    const media = doc.paths['/api/v1/messages'].post.responses['401'].content['application/json'];
    expect(response.json()).toEqual(media.example);
    expect(media.example).toEqual({ message: 'Unauthenticated.' });
  });

  it('name the status of each error shape: 404 NOT-404, 409 and 503 with Retry-After', () => {
    const lookup = doc.paths['/api/v1/messages/{campaign}'].get.responses;
    expect(lookup['404'].content['application/json'].example).toEqual({
      title: 'Not Found',
      detail: 'Campaign 42 was not found.',
      instance: 'http://localhost:3000/api/v1/messages/42',
      code: 'NOT-404',
      link: '',
    });
    const send = doc.paths['/api/v1/messages'].post.responses;
    expect(send['409'].headers['Retry-After'].required).toBe(true);
    // A cancel's 409 (already completed) is final: nothing to retry after.
    expect(
      doc.paths['/api/v1/messages/{campaign}/cancel'].post.responses['409'].headers,
    ).toBeUndefined();
    expect(send['409'].content['application/json'].example).toEqual({
      message:
        'A request with this Idempotency-Key is still being processed. Retry with the same key shortly.',
    });
    expect(send['503'].content['application/json'].example).toEqual({
      message: 'Herald is at capacity and did not save this send: retry after Retry-After seconds.',
    });
    const otp = doc.paths['/api/v1/otp/send'].post.responses;
    expect(otp['402'].content['application/json'].example).toEqual({
      message:
        'The workspace does not have enough credits: this code needs 1. An operator adds credits with `herald credits add --workspace acme --amount <n>`.',
    });
  });
});
