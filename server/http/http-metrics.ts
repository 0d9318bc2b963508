import type { FastifyInstance } from 'fastify';
import { httpRequestDuration } from '../../telemetry/metrics.js';

/**
 * Every answered request into herald_http_request_duration_seconds, by method, route template
 * (`/api/v1/messages/:id`, never the id) and status. A request no route matched is `unmatched`:
 * a scanner's paths must not become label values.
 */
export function recordHttpMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    httpRequestDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
