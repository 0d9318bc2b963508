/**
 * `npm run bench:mcp`: `tools/call` latency of each MCP tool on a workspace seeded with one
 * million messages, through the real HTTP endpoint with an OAuth access token, without and with
 * the delivery summary cache. Prints JSON.
 */
import { cpus } from 'node:os';
import { connectWithForms } from '../test/support/oauth-forms.js';
import { measureLatency } from './support/measure.js';
import { seedMillionMessages } from './support/seed-reporting.js';
import { BENCH_USER, log, startBenchStack } from './support/stack.js';

const CALLS = 200;

async function main() {
  const stack = await startBenchStack({
    env: { MCP_ENABLED: 'true', MCP_DELIVERY_SUMMARY_CACHE_TTL: '0' },
    secondApiEnv: { MCP_DELIVERY_SUMMARY_CACHE_TTL: '30' },
  });
  try {
    const seeded = await seedMillionMessages(stack.sql, 'bench');
    log(`seeded ${seeded.messages} messages in ${seeded.batches} batches (${seeded.seconds} s)`);
    const { accessToken } = await connectWithForms(stack.apiUrl, BENCH_USER);

    const callTool = async (apiUrl: string, name: string, args: Record<string, unknown>) => {
      const response = await fetch(`${apiUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
      const body = (await response.json()) as { result?: { isError?: boolean; content?: unknown } };
      if (response.status !== 200 || !body.result || body.result.isError) {
        throw new Error(`${name} answered ${response.status}: ${JSON.stringify(body)}`);
      }
    };

    const calls: [string, Record<string, unknown>][] = [
      ['list_recent_campaigns', { limit: 20 }],
      ['get_campaign_report', { campaign_id: seeded.campaignId }],
      ['get_delivery_summary', { days: 30 }],
      ['get_completed_campaign_summary', { days: 30 }],
      ['list_recent_quick_sends', { limit: 20 }],
      ['get_quick_send_report', { quick_send_id: seeded.quickSendId }],
      ['get_team_statistics', {}],
    ];
    const measureAll = async (apiUrl: string) => {
      const results: Record<string, unknown> = {};
      for (const [name, args] of calls) {
        await callTool(apiUrl, name, args);
        results[name] = await measureLatency(CALLS, 1, () => callTool(apiUrl, name, args));
      }
      return results;
    };
    const uncached = await measureAll(stack.apiUrl);
    const cached = await measureAll(stack.secondApiUrl as string);
    const slowest = Math.max(
      ...Object.values(uncached).map((summary) => (summary as { p50_ms: number }).p50_ms),
    );
    const report = {
      benchmark: 'mcp',
      shape: stack.shape,
      machine: { cpus: cpus().length, node: process.version },
      setup: `${stack.setup}; MCP enabled; one workspace with 1,000,000 messages in 1,000 batches over 30 days; sequential tools/call over HTTP with an OAuth access token`,
      seeded,
      summary_cache_ttl_0: uncached,
      summary_cache_ttl_30: cached,
      slowest_uncached_p50_ms: slowest,
      aims: { every_tool_under_50_ms_p50_uncached: slowest < 50 },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await stack.close();
  }
}

await main();
