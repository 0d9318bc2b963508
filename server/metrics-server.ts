/**
 * `/metrics` on METRICS_PORT: Herald's registry (telemetry/metrics.ts), the process's own
 * (CPU, memory, event-loop delay, garbage collection), and in a worker the Temporal SDK's worker
 * metrics, which its Runtime exports on a loopback port of their own and this endpoint passes
 * through, so one scrape target per process carries everything. A bare node:http server: it
 * serves one path, to Prometheus, off the public api.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import type { Sql } from '../db/client.js';
import { campaignBacklog, heraldConnectionsByState } from '../db/operations.js';
import { registry, setMetricSources } from '../telemetry/metrics.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** How long one scrape waits for the Temporal SDK's metrics. */
const SDK_METRICS_TIMEOUT_MS = 2_000;

export async function startMetricsServer(options: {
  port: number;
  host: string;
  sql: Sql;
  poolMax: number;
  /** Where the Temporal Runtime serves its worker metrics, in a worker process. */
  temporalSdkMetricsUrl?: () => string | undefined;
}): Promise<MetricsServer> {
  collectDefaultMetrics({ register: registry });
  // Postgres away must not take the other metrics down with it: a failed read is left out.
  const backlog = oncePerScrape(() => campaignBacklog(options.sql).catch(() => undefined));
  setMetricSources({
    backlog: backlog.read,
    connections: () => heraldConnectionsByState(options.sql).catch(() => undefined),
    poolMax: options.poolMax,
  });
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://metrics').pathname;
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify({ message: 'Not found: metrics are at GET /metrics.' }));
      return;
    }
    backlog.reset();
    exposition(options.temporalSdkMetricsUrl?.()).then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType });
        response.end(text);
      },
      (error: Error) => {
        response.writeHead(503, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify({ message: `Metrics unavailable: ${error.message}` }));
      },
    );
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

/** Herald's metrics, then the SDK's when a worker runs here (left out if it cannot answer now). */
async function exposition(sdkMetricsUrl: string | undefined): Promise<string> {
  const [own, sdk] = await Promise.all([
    registry.metrics(),
    sdkMetricsUrl === undefined
      ? ''
      : fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(SDK_METRICS_TIMEOUT_MS) }).then(
          (answer) => (answer.ok ? answer.text() : ''),
          () => '',
        ),
  ]);
  return sdk === '' ? own : `${own}\n${sdk}`;
}

/** One read shared by the gauges of one scrape; `reset` before the next. */
function oncePerScrape<T>(read: () => Promise<T>) {
  let value: Promise<T> | undefined;
  return {
    read: () => {
      value ??= read();
      return value;
    },
    reset: () => {
      value = undefined;
    },
  };
}
