import { afterAll, describe, expect, inject, it } from 'vitest';
import { createSql } from '../../db/client.js';
import { type MetricsServer, startMetricsServer } from '../../server/metrics-server.js';

/**
 * /metrics while Postgres cannot be read (issue 26, item 1): the gauges read from Postgres are
 * left out of the scrape, and everything else still answers, when an operator needs it most.
 */
describe('/metrics without Postgres', () => {
  let server: MetricsServer | undefined;

  afterAll(async () => {
    await server?.close();
  });

  it('answers 200 with every metric but the ones Postgres would give', async () => {
    const sql = createSql(inject('databaseUrl'), { max: 1 });
    await sql.end();
    server = await startMetricsServer({ port: 0, host: '127.0.0.1', sql, poolMax: 1 });
    const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).toContain('herald_sends_total');
    expect(text).toMatch(/^herald_db_pool_connections_max 1$/m);
    expect(text).not.toMatch(/^herald_db_connections\{/m);
  });
});
