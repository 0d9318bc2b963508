import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('documents the response status codes of the message routes', () => {
    expect(Object.keys(doc.paths['/api/v1/messages'].post.responses).sort()).toEqual([
      '202',
      '401',
      '403',
      '409',
      '422',
    ]);
    expect(Object.keys(doc.paths['/api/v1/messages/{campaign}'].get.responses).sort()).toEqual([
      '200',
      '401',
      '403',
      '404',
    ]);
  });

  it('documents the response status codes of the OTP routes', () => {
    expect(Object.keys(doc.paths['/api/v1/otp/send'].post.responses).sort()).toEqual([
      '202',
      '401',
      '402',
      '403',
      '409',
      '422',
    ]);
    expect(Object.keys(doc.paths['/api/v1/otp/verify'].post.responses).sort()).toEqual([
      '200',
      '401',
      '403',
      '422',
    ]);
  });

  it('documents the send request body although the route validates in its handler', () => {
    const schema =
      doc.paths['/api/v1/messages'].post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['recipients', 'message']));
    expect(schema.properties.recipients.maxItems).toBe(1000);
  });

  it('leaves out health, hidden and documentation routes', () => {
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/messages',
      '/api/v1/messages/{campaign}',
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
      expect(response.json()).toEqual({ message: `The ${method} method is not allowed here.` });
    }
  });

  it('a path nothing routes is still the documented 404', async () => {
    const response = await stack.app.inject({ method: 'DELETE', url: '/api/v1/nothing' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'NOT-404' });
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
