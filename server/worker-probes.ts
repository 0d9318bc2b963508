/**
 * The worker's probes on WORKER_HEALTH_PORT, as the api's (api/routes/health.ts): `/livez` while
 * the worker runs, `/readyz` while it also reaches Postgres and Temporal and the database has
 * every migration. A worker has no HTTP app, so this is a bare node:http server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { checkReadiness, unreadyReasons } from '../commands/operations/readiness.js';
import type { Sql } from '../db/client.js';

export interface WorkerProbes {
  port: number;
  close(): Promise<void>;
}

async function answer(
  path: string,
  deps: { sql: Sql; temporal: Client; running: () => boolean },
): Promise<[number, object]> {
  const worker = deps.running() ? 'running' : 'stopped';
  if (path === '/livez')
    return worker === 'running' ? [200, { status: 'ok' }] : [503, { status: 'stopped' }];
  if (path !== '/readyz') return [404, { message: 'Not found.' }];
  const readiness = await checkReadiness(deps);
  const all = { ...readiness.checks, worker };
  if (readiness.ready && worker === 'running') return [200, { status: 'ready', checks: all }];
  const reasons = [
    ...unreadyReasons(readiness),
    ...(worker === 'stopped' ? ['worker stopped'] : []),
  ];
  return [503, { status: 'not_ready', message: `Not ready: ${reasons.join('; ')}.`, checks: all }];
}

export async function startWorkerProbes(options: {
  port: number;
  host: string;
  sql: Sql;
  temporal: Client;
  running: () => boolean;
}): Promise<WorkerProbes> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://probe').pathname;
    const reply = ([status, body]: [number, object]) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET') return reply([405, { message: 'Only GET.' }]);
    answer(path, options).then(reply, () => reply([503, { status: 'not_ready' }]));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
