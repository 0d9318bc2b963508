/**
 * `npm run bench:console`: server-rendered page latency of the console (p50 under 50 ms is the
 * aim) on the workspace `bench:mcp` seeds with one million messages, through the real HTTP
 * endpoint with a signed-in session. Prints JSON.
 */
import { cpus } from 'node:os';
import { measureLatency } from './support/measure.js';
import { seedMillionMessages } from './support/seed-reporting.js';
import { BENCH_USER, log, startBenchStack } from './support/stack.js';

const CALLS = 200;

/** Signs in through the form and returns the session cookie. */
async function signIn(apiUrl: string): Promise<string> {
  const form = await fetch(`${apiUrl}/console/sign-in`);
  const formCookie = /herald_form=[^;]+/.exec(form.headers.get('set-cookie') ?? '')?.[0] ?? '';
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const signedIn = await fetch(`${apiUrl}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({
      _csrf: token,
      email: BENCH_USER.email,
      password: BENCH_USER.password,
    }),
  });
  const session = /herald_session=[^;]+/.exec(signedIn.headers.get('set-cookie') ?? '')?.[0];
  if (signedIn.status !== 303 || !session) throw new Error(`sign-in answered ${signedIn.status}`);
  return session;
}

async function main() {
  const stack = await startBenchStack();
  try {
    const seeded = await seedMillionMessages(stack.sql, 'bench');
    log(`seeded ${seeded.messages} messages in ${seeded.batches} batches (${seeded.seconds} s)`);
    const cookie = await signIn(stack.apiUrl);
    const base = '/console/w/bench';
    const pages = {
      dashboard: base,
      recent_batches_fragment: `${base}/recent-batches`,
      campaigns: `${base}/campaigns`,
      campaigns_paused_none_match: `${base}/campaigns?status=paused`,
      campaigns_named_7_days: `${base}/campaigns?source=campaign&period=7d`,
      campaigns_api_dates_older_page: `${base}/campaigns?source=api&from=2000-01-01&to=2100-01-01&older_than=${seeded.quickSendId + 500}`,
      batch: `${base}/batches/${seeded.quickSendId}`,
      batch_live_fragment: `${base}/batches/${seeded.quickSendId}/live`,
      campaign_batch: `${base}/batches/${seeded.campaignId}`,
      campaign_batch_last_recipients: `${base}/batches/${seeded.campaignId}?after=950`,
      create_campaign_form: `${base}/campaigns/new`,
      quick_send: `${base}/quick-send`,
      api_keys: `${base}/developer/api-keys`,
      mcp_connections: `${base}/developer/mcp`,
      team: `${base}/team`,
      audit: `${base}/audit`,
      profile: '/console/profile',
    };
    const results: Record<string, unknown> = {};
    for (const [name, path] of Object.entries(pages)) {
      const get = async () => {
        const response = await fetch(`${stack.apiUrl}${path}`, { headers: { cookie } });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      };
      await get();
      results[name] = await measureLatency(CALLS, 1, get);
    }
    const slowest = Math.max(
      ...Object.values(results).map((summary) => (summary as { p50_ms: number }).p50_ms),
    );
    const report = {
      benchmark: 'console',
      machine: { cpus: cpus().length, node: process.version },
      setup:
        'herald api against embedded Postgres 16; the bench:mcp workspace with 1,000,000 messages in 1,000 batches over 30 days; sequential GETs over HTTP with a signed-in owner session (times include the loopback round trip)',
      seeded,
      pages: results,
      slowest_p50_ms: slowest,
      aims: { every_page_under_50_ms_p50: slowest < 50 },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await stack.close();
  }
}

await main();
