/**
 * The provider HTTP client's transport edges (providers/json-http.ts), and what each says about
 * whether a submission left Herald (providers/http-answers.ts notSentCode): only an error before
 * the connection was made may count as not sent.
 */
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { notSentCode } from '../../providers/http-answers.js';
import { type JsonAnswer, requestJson } from '../../providers/json-http.js';

const servers: http.Server[] = [];

async function serve(handler: http.RequestListener, keepAliveTimeoutMs = 5_000) {
  const server = http.createServer(handler);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  const connections: Socket[] = [];
  server.on('connection', (socket) => connections.push(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/v1/messages`), connections };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const post = (url: URL, timeoutMs = 5_000) =>
  requestJson(url, { method: 'POST', body: '{"to":"+61400000001"}', timeoutMs });

/** The error a call rejected with (fails the test if it answered). */
async function failure(call: Promise<JsonAnswer>): Promise<Error> {
  const outcome = await call.then(
    (answer) => new Error(`answered ${answer.status}`),
    (error: Error) => error,
  );
  if (outcome.message.startsWith('answered')) throw outcome;
  return outcome;
}

describe('requestJson', () => {
  it('does not reuse a connection idle past the server’s keep-alive hint', async () => {
    // Node's server sends `Keep-Alive: timeout=2`: the client closes it after 1 s idle.
    const { url, connections } = await serve((_request, response) => response.end('{}'), 2_000);
    expect((await post(url)).status).toBe(200);
    expect((await post(url)).status).toBe(200);
    expect(connections).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await post(url)).status).toBe(200);
    expect(connections).toHaveLength(2);
  });

  it('still reads an answer slower than the idle timeout', async () => {
    const { url } = await serve((_request, response) => {
      setTimeout(() => response.end('{"id":"slow"}'), 4_500);
    });
    expect((await post(url, 8_000)).body).toEqual({ id: 'slow' });
  }, 10_000);

  it('counts an unreachable host on a connection already made as possibly sent', async () => {
    const { url } = await serve((request) => {
      request.resume();
      // The request reached the server; then the client's route to it goes.
      request.on('end', () =>
        outgoing?.destroy(Object.assign(new Error('unreachable'), { code: 'EHOSTUNREACH' })),
      );
    });
    let outgoing: http.ClientRequest | undefined;
    const watch = ({ request }: { request: http.ClientRequest }) => {
      outgoing = request;
    };
    diagnostics.subscribe('http.client.request.start', watch as (message: unknown) => void);
    try {
      const error = await failure(post(url));
      expect((error.cause as { code?: string }).code).toBe('EHOSTUNREACH');
      expect(notSentCode(error)).toBeUndefined();
    } finally {
      diagnostics.unsubscribe('http.client.request.start', watch as (message: unknown) => void);
    }
  });

  it('counts headers followed by silence as possibly sent, at its deadline', async () => {
    const { url } = await serve((request, response) => {
      request.resume();
      response.writeHead(202, { 'content-type': 'application/json' });
      response.write('{"id":');
    });
    const started = performance.now();
    const error = await failure(post(url, 500));
    expect(error.message).toBe('no answer within 500 ms');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(notSentCode(error)).toBeUndefined();
  });

  it('counts a connection reset mid-answer as possibly sent', async () => {
    const { url } = await serve((request, response) => {
      request.resume();
      response.writeHead(202, { 'content-type': 'application/json' });
      response.write('{"id":', () => response.socket?.destroy());
    });
    const error = await failure(post(url));
    expect(notSentCode(error)).toBeUndefined();
  });

  it('counts a refused connection as not sent', async () => {
    const { url } = await serve(() => {});
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    expect(notSentCode(await failure(post(url)))).toBe('ECONNREFUSED');
  });
});
