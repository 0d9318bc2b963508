import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMcpServer } from '../support/mcp.js';
import { openStack, type Stack } from '../support/stack.js';

let stack: Stack;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON.
let doc: any;

beforeAll(async () => {
  stack = await openStack();
  const response = await stack.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = response.json();
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
