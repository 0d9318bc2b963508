/**
 * A customer's webhook endpoint for tests: a real HTTP server on 127.0.0.1 (port 0) that records
 * every request (raw body, headers, time) and answers each path from a plan: a status code, or
 * `hang` (never answers, until the receiver closes). Unplanned requests get 200.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { expect } from 'vitest';
import { webhookAttempts } from '../../cli/admin/webhooks.js';
import type { AdminContext } from '../../cli/context.js';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
  at: number;
}

export type PlannedAnswer = number | 'hang';

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Requests to `path` so far. */
  at(path: string): ReceivedWebhook[];
  /** The answers for the next requests to `path`, in order; 200 once they are used up. */
  plan(path: string, answers: PlannedAnswer[]): void;
  /** Waits (bounded) until `path` has had `count` requests, and returns them. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const plans = new Map<string, PlannedAnswer[]>();
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      received.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const answer = plans.get(path)?.shift() ?? 200;
      if (answer === 'hang') return;
      // A redirect points at `<path>/redirected`: a client that followed it would show there.
      const location = answer >= 300 && answer < 400 ? { location: `${path}/redirected` } : {};
      response
        .writeHead(answer, { 'content-type': 'text/plain', ...location })
        .end(`answer ${answer}`);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const at = (path: string) => received.filter((request) => request.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    at,
    plan(path, answers) {
      plans.set(path, [...answers]);
    },
    async waitFor(path, count, timeoutMs = 20_000) {
      await expect
        .poll(() => at(path).length, { timeout: timeoutMs, interval: 50 })
        .toBeGreaterThanOrEqual(count);
      return at(path);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One row of `herald webhook attempts --json`. */
export interface LoggedAttempt {
  event_id: string;
  type: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  succeeded: boolean;
  next_attempt_at: string | null;
  final: boolean;
}

/** An endpoint's attempts log as `webhook attempts` prints it, oldest first. */
export async function attemptsLog(
  admin: AdminContext,
  endpointId: number,
): Promise<LoggedAttempt[]> {
  const { json } = await webhookAttempts(admin, { id: String(endpointId), limit: '100' });
  return [...(json.attempts as LoggedAttempt[])].reverse();
}
