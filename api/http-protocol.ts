import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Answers given at the HTTP level, before a route's own code runs, in Herald's `{message}` error
 * shape (docs/api.md, "The OpenAPI document and HTTP-level answers"): 405 with `Allow` for a method a path does
 * not take, 414 for a URL too long, 415 for a body that is not JSON, 400/408/431 for what Node's
 * HTTP parser refuses. 413 (a body over `bodyLimit`) reaches the error handler as any 4xx does.
 */

/** A path parameter longer than this (a campaign id) is refused with 414, as a URL too long. */
export const MAX_PARAM_LENGTH = 100;

const json = (status: number, message: string) => {
  const body = JSON.stringify({ message });
  return (
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    // The headers server/http/security-headers.ts puts on every other answer.
    'X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
};

/**
 * Node refused the request before fastify saw it. Its request line and headers together may be
 * `maxHeaderSize` bytes (16 KiB): when the request line alone does not fit, the URL is too long.
 */
function answerClientError(error: Error, socket: Socket) {
  const { code, rawPacket } = error as Error & { code?: string; rawPacket?: unknown };
  if (code === 'ECONNRESET' || socket.destroyed) return;
  let answer: string;
  if (code === 'HPE_HEADER_OVERFLOW') {
    const requestLineEnd = Buffer.isBuffer(rawPacket) ? rawPacket.indexOf('\r\n') : -1;
    answer =
      requestLineEnd < 0 || requestLineEnd >= maxHeaderSize
        ? json(414, 'The URL is too long.')
        : json(431, 'The request headers are too large.');
  } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // Something was answered on this connection already (the request deadline's 503 while the
    // body was still arriving, or an earlier request): a 408 after it would answer nothing.
    if (socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    answer = json(408, 'The request took too long to arrive.');
  } else {
    answer = json(400, 'The request is not valid HTTP.');
  }
  if (socket.writable) socket.write(answer);
  socket.destroy();
}

/** Errors fastify's router raises before routing: a bad percent-encoding, a parameter too long. */
function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // These replies skip the onSend hooks: the headers every other answer gets, set here.
  reply.headers({
    'x-request-id': request.id,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return reply.code(414).send({ message: 'The URL is too long.' });
  if (error.code === 'FST_ERR_BAD_URL')
    return reply.code(400).send({ message: 'The URL is not valid.' });
  return reply.code(500).send({ message: 'Server error.' });
}

/** Options of the Fastify constructor. */
export const httpProtocolOptions = {
  routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  // A JSON key that could poison a prototype is dropped, as any field Herald does not read is
  // ignored, instead of refusing the body as if it were not JSON.
  onProtoPoisoning: 'remove' as const,
  onConstructorPoisoning: 'remove' as const,
  clientErrorHandler: answerClientError,
  frameworkErrors: answerFrameworkError,
};

/**
 * An MCP client given a URL without `/mcp` (the base URL, the console's): docs/spec.md §7 answers it 404,
 * not 405. Told by what every Streamable HTTP client sends, as the body is not read yet: an MCP
 * header, or a POST accepting an event stream; and any POST to the base URL.
 */
function looksLikeMcp(request: FastifyRequest): boolean {
  const { headers } = request;
  const path = request.url.split('?', 1)[0];
  if (path === '/mcp') return false;
  if (
    headers['mcp-protocol-version'] !== undefined ||
    headers['mcp-session-id'] !== undefined ||
    headers['mcp-method'] !== undefined
  ) {
    return true;
  }
  if (request.method !== 'POST') return false;
  return path === '/' || /text\/event-stream/i.test(headers.accept ?? '');
}

/**
 * A request no route takes: when other methods are routed at that path, 405 with `Allow`
 * (RFC 9110 §15.5.6), before the body is read or the caller authenticated; else, and for an MCP
 * request at a URL that is not the MCP endpoint, the 404 stands.
 */
export function answerUndeclaredMethods(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 || looksLikeMcp(request)) return;
    const allowed = app.supportedMethods.filter(
      (method) => app.findRoute({ method, url: request.url }) !== null,
    );
    if (allowed.length === 0) return;
    return reply
      .code(405)
      .header('allow', allowed.join(', '))
      .send({ message: `The ${request.method} method is not allowed here.` });
  });
}

/**
 * The REST API reads JSON bodies only: without fastify's text/plain parser, any other media
 * type is a 415. Registered inside the REST scope, so the form-posting routes keep theirs.
 */
export const jsonBodiesOnly = fp(async (app: FastifyInstance) => {
  app.removeContentTypeParser('text/plain');
});
