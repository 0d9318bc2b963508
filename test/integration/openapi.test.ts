import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otpTemplateProblem } from '../../domain/otp.js';
import { openMcpServer } from '../support/mcp.js';
import { createTenant, openStack, type Stack } from '../support/stack.js';

let stack: Stack;
let token: string;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON.
let doc: any;

beforeAll(async () => {
  stack = await openStack();
  const response = await stack.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = response.json();
  token = (await createTenant(stack.admin)).token;
});

afterAll(() => stack.close());

describe('OpenAPI description', () => {
  it('is OpenAPI 3.1, version 1.0.0, secured by bearer API keys', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'Herald API', version: '1.0.0' });
    expect(doc.components.securitySchemes.bearerAuth).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: 'API key',
    });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('describes the REST API only: not the health probe, MCP, OAuth or the console pages', () => {
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/messages',
      '/api/v1/messages/{campaign}',
      '/api/v1/messages/{campaign}/cancel',
      '/api/v1/messages/{campaign}/recipients',
      '/api/v1/otp/send',
      '/api/v1/otp/verify',
    ]);
  });

  it('documents the response status codes of the message routes', () => {
    expect(Object.keys(doc.paths['/api/v1/messages'].post.responses)).toEqual([
      '202',
      '401',
      '403',
      '409',
      '413',
      '414',
      '415',
      '422',
      '429',
      '431',
      '503',
    ]);
    expect(Object.keys(doc.paths['/api/v1/messages/{campaign}'].get.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '414',
      '422',
      '429',
      '431',
      '503',
    ]);
  });

  it('documents the response status codes of the OTP routes', () => {
    expect(Object.keys(doc.paths['/api/v1/otp/send'].post.responses)).toEqual([
      '202',
      '401',
      '402',
      '403',
      '409',
      '413',
      '414',
      '415',
      '422',
      '429',
      '431',
      '503',
    ]);
    expect(Object.keys(doc.paths['/api/v1/otp/verify'].post.responses)).toEqual([
      '200',
      '401',
      '403',
      '413',
      '414',
      '415',
      '422',
      '429',
      '431',
      '503',
    ]);
  });

  it('gives 413, 414, 415, 431 and 503 the {message} shape, and 409 and 503 a Retry-After', () => {
    const { responses } = doc.paths['/api/v1/messages'].post;
    const messageOnly = {
      type: 'object',
      properties: { message: { type: 'string', description: 'Human-readable explanation' } },
      required: ['message'],
      additionalProperties: false,
    };
    // The send's own 503 (docs/api.md "Admission") says when it is answered.
    for (const status of ['413', '414', '415', '431', '503'])
      expect(
        { ...responses[status].content['application/json'].schema, description: undefined },
        status,
      ).toEqual(messageOnly);
    expect(responses['503'].description).toContain('Herald is at capacity');
    for (const status of ['409', '503'])
      expect(responses[status].headers['Retry-After'].required, status).toBe(true);
    const campaign = doc.paths['/api/v1/messages/{campaign}'].get.parameters[0];
    expect(campaign.schema).toMatchObject({ maxLength: 100, pattern: '^[^\\u0000]*$' });
  });

  it('carries the limits and patterns the server enforces on a send', () => {
    const schema =
      doc.paths['/api/v1/messages'].post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['recipients', 'message']);
    expect(schema.properties.recipients).toMatchObject({
      minItems: 1,
      maxItems: 1000,
      items: { type: 'string', pattern: '^\\+[1-9][0-9]{7,14}$' },
    });
    expect(schema.properties.message).toMatchObject({ minLength: 1, maxLength: 1600 });
    expect(schema.properties.sender_id.anyOf[0]).toMatchObject({ maxLength: 11 });
    expect(schema.properties.reference.anyOf[0]).toMatchObject({ maxLength: 100 });
    expect(schema.properties.provider_slug.anyOf[0].pattern).toBe('^[a-z0-9][a-z0-9_-]{0,62}$');
    const key = doc.paths['/api/v1/messages'].post.parameters.find(
      (parameter: { name: string }) => parameter.name === 'idempotency-key',
    );
    expect(key.schema).toMatchObject({ minLength: 1, maxLength: 255 });
  });

  it('carries the limits and patterns the server enforces on an OTP', () => {
    const send = doc.paths['/api/v1/otp/send'].post.requestBody.content['application/json'].schema;
    expect(send.properties.purpose.anyOf[0]).toMatchObject({
      maxLength: 100,
      pattern: '^[A-Za-z0-9._:-]+$',
    });
    expect(send.properties.code_length.anyOf[0]).toMatchObject({ minimum: 6, maximum: 8 });
    expect(send.properties.expires_in_minutes.anyOf[0]).toMatchObject({ minimum: 1, maximum: 10 });
    expect(send.properties.message_template.anyOf[0].maxLength).toBe(160);
    const verify =
      doc.paths['/api/v1/otp/verify'].post.requestBody.content['application/json'].schema;
    expect(verify.properties.code.pattern).toBe('^[0-9]{4,8}$');
    expect(verify.oneOf).toHaveLength(2);
  });

  it('the message_template pattern agrees with the server on placeholders', () => {
    const send = doc.paths['/api/v1/otp/send'].post.requestBody.content['application/json'].schema;
    const pattern = new RegExp(send.properties.message_template.anyOf[0].pattern);
    // Short texts fit one segment, so the server's only objections are about placeholders.
    const alphabet = ['{', '}', 'c', 'o', 'd', 'e', ' ', '\t', 'x', '{code}'];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 5000; i++) {
      const text = Array.from({ length: random(12) }, () => alphabet[random(alphabet.length)]).join(
        '',
      );
      expect(pattern.test(text), JSON.stringify(text)).toBe(otpTemplateProblem(text, 6) === null);
    }
  });

  it('says that no string or key of a request may hold NUL, extra fields included', () => {
    for (const path of ['/api/v1/messages', '/api/v1/otp/send', '/api/v1/otp/verify']) {
      const schema = doc.paths[path].post.requestBody.content['application/json'].schema;
      expect(schema.propertyNames, path).toEqual({ pattern: '^[^\\u0000]*$' });
      expect(schema.additionalProperties, path).toEqual({
        $ref: '#/components/schemas/JsonWithoutNul',
      });
    }
    const send = doc.paths['/api/v1/messages'].post.requestBody.content['application/json'].schema;
    const message = new RegExp(send.properties.message.pattern);
    expect([' a ', 'a\u0000', ' \t\ufeff'].map((text) => message.test(text))).toEqual([
      true,
      false,
      false,
    ]);
    expect(doc.components.schemas.JsonWithoutNul.anyOf).toHaveLength(4);
  });

  it("describes a campaign's recipient listing: its query, statuses, answers and an example", () => {
    const operation = doc.paths['/api/v1/messages/{campaign}/recipients'].get;
    expect(Object.keys(operation.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '414',
      '422',
      '429',
      '431',
      '503',
    ]);
    expect(
      operation.parameters.map((parameter: { name: string; in: string }) => [
        parameter.in,
        parameter.name,
      ]),
    ).toEqual([
      ['query', 'status'],
      ['query', 'cursor'],
      ['query', 'limit'],
      ['path', 'campaign'],
    ]);
    const statuses = [
      'queued',
      'sent',
      'delivered',
      'undelivered',
      'failed',
      'canceled',
      'excluded',
    ];
    expect(operation.parameters[0].schema.enum).toEqual(statuses);
    expect(operation.parameters[1].schema.pattern).toBe('^[A-Za-z0-9_-]{1,16}$');
    expect(operation.parameters[2].schema.pattern).toBe('^(?:[1-9][0-9]{0,2}|1000)$');
    const ok = operation.responses['200'].content['application/json'];
    expect(ok.schema.properties.data.properties.recipients.items.properties.status.enum).toEqual(
      statuses,
    );
    expect(ok.example.data.recipients[0]).toEqual({
      recipient: '•••• 5678',
      status: 'delivered',
      error_code: null,
      provider: 'own',
      sent_at: '2026-11-27T09:00:01.120Z',
      receipt_at: '2026-11-27T09:00:03.480Z',
    });
  });

  it('links a send to its lookup and an OTP to its verification', () => {
    expect(doc.paths['/api/v1/messages'].post.responses['202'].links.LookUpCampaign).toEqual({
      operationRef: '#/paths/~1api~1v1~1messages~1{campaign}/get',
      parameters: { campaign: '$response.body#/data/message/id' },
    });
    expect(doc.paths['/api/v1/otp/send'].post.responses['202'].links.VerifyCode.operationRef).toBe(
      '#/paths/~1api~1v1~1otp~1verify/post',
    );
  });

  it('leaves out health, hidden and documentation routes', () => {
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/messages',
      '/api/v1/messages/{campaign}',
      '/api/v1/messages/{campaign}/cancel',
      '/api/v1/messages/{campaign}/recipients',
      '/api/v1/otp/send',
      '/api/v1/otp/verify',
    ]);
  });

  it('leaves out the MCP, OAuth and discovery routes when MCP is enabled', async () => {
    const mcp = await openMcpServer();
    try {
      const response = await fetch(`${mcp.baseUrl}/api/v1/openapi.json`);
      const enabled = (await response.json()) as { paths: Record<string, unknown> };
      expect(Object.keys(enabled.paths).sort()).toEqual(Object.keys(doc.paths).sort());
    } finally {
      await mcp.close();
    }
  });
});

describe('docs page', () => {
  it('answers HTML without authentication and loads nothing from elsewhere', async () => {
    const response = await stack.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('openapi.json');
    expect(response.body).not.toMatch(/https?:\/\//);
  });
});

/** One raw HTTP/1.1 request over a socket (Node's parser, not inject): the status line and body. */
async function rawRequest(
  port: number,
  request: string,
): Promise<{ status: number; body: string }> {
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  // Every answer carries the headers of server/http/security-headers.ts, these written by hand too.
  expect(head).toContain('\r\nX-Content-Type-Options: nosniff\r\n');
  return { status: Number(head.split(' ')[1]), body };
}

describe('HTTP-level answers, in the {message} shape', () => {
  const auth = () => ({ authorization: `Bearer ${token}` });

  it.each([
    ['PUT', '/api/v1/messages', 'POST'],
    ['GET', '/api/v1/messages', 'POST'],
    ['DELETE', '/api/v1/messages/1', 'GET, HEAD'],
    ['POST', '/api/v1/messages/1?x=1', 'GET, HEAD'],
    ['OPTIONS', '/api/v1/otp/verify', 'POST'],
    ['PATCH', '/api/v1/otp/send', 'POST'],
  ] as const)('405 with Allow for %s %s, before authentication', async (method, url, allow) => {
    for (const headers of [{}, auth()]) {
      const response = await stack.app.inject({ method, url, headers });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe(allow);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.json()).toEqual({ message: `The ${method} method is not allowed here.` });
    }
  });

  it('a path nothing routes is still the documented 404', async () => {
    const response = await stack.app.inject({ method: 'DELETE', url: '/api/v1/nothing' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'NOT-404' });
  });

  it('drops a __proto__ key as any unread field, instead of calling the body not JSON', async () => {
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/otp/verify',
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '{"__proto__": {"x": 1}, "constructor": {"prototype": {}}, "code": "12"}',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual({
      recipient: ['The recipient field is required.'],
      code: ['The code field must be 4 to 8 digits.'],
      request_id: ['The request id field is required when purpose is not present.'],
    });
  });

  it('413 for a body over 1 MiB', async () => {
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: JSON.stringify({ recipients: ['+61412345678'], message: 'x'.repeat(1024 * 1024) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ message: 'Request body is too large' });
  });

  it.each([
    ['text/plain', 'hello'],
    ['application/xml', '<a/>'],
    ['application/x-www-form-urlencoded', 'recipients=1'],
    [undefined, '{"recipients":[]}'],
  ])('415 for a %s body on every REST operation that takes one', async (type, payload) => {
    for (const url of ['/api/v1/messages', '/api/v1/otp/send', '/api/v1/otp/verify']) {
      const headers = type ? { ...auth(), 'content-type': type } : auth();
      const response = await stack.app.inject({ method: 'POST', url, headers, payload });
      expect(response.statusCode, url).toBe(415);
      expect(response.json()).toEqual({ message: 'Unsupported Media Type' });
    }
  });

  it('414 for a campaign id over 100 characters; 400 for a malformed percent-encoding', async () => {
    const long = await stack.app.inject({
      method: 'GET',
      url: `/api/v1/messages/${'1'.repeat(101)}`,
      headers: auth(),
    });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ message: 'The URL is too long.' });
    expect(long.headers['x-content-type-options']).toBe('nosniff');
    const malformed = await stack.app.inject({
      method: 'GET',
      url: '/api/v1/messages/%zz',
      headers: auth(),
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual({ message: 'The URL is not valid.' });
  });

  it("414 for a request line over Node's 16 KiB, 431 for headers over it, 400 for garbage", async () => {
    const server = await openStack();
    try {
      await server.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = server.app.server.address() as { port: number };
      const longUrl = await rawRequest(
        port,
        `GET /api/v1/messages?q=${'x'.repeat(17_000)} HTTP/1.1\r\nHost: h\r\n\r\n`,
      );
      expect(longUrl).toEqual({ status: 414, body: '{"message":"The URL is too long."}' });
      const bigHeaders = await rawRequest(
        port,
        `GET /api/v1/messages HTTP/1.1\r\nHost: h\r\nX-Big: ${'y'.repeat(17_000)}\r\n\r\n`,
      );
      expect(bigHeaders).toEqual({
        status: 431,
        body: '{"message":"The request headers are too large."}',
      });
      const garbage = await rawRequest(port, 'NOT HTTP\r\n\r\n');
      expect(garbage).toEqual({
        status: 400,
        body: '{"message":"The request is not valid HTTP."}',
      });
    } finally {
      await server.close();
    }
  });
});
