import { execFileSync } from 'node:child_process';
import { type RunningPrometheus, startPrometheus } from '../../test/support/prometheus.js';
import { CAMPAIGN_SIZE, clearInbox, drained, send, simulatorBehaviour } from './campaigns.js';
import { round } from './measure.js';
import { type BenchStack, log } from './stack.js';

/** How long each receipt waits at the simulator in the receipt-delay phase. */
const RECEIPT_DELAY_MS = 1500;

function installed(): boolean {
  try {
    execFileSync('prometheus', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A real Prometheus scraping the bench stack's /metrics each second with Herald's alert rules,
 * or undefined when none is installed. `report` reads what an operator would: sends per second
 * by outcome in the middle of a timed run, the receipt-delay histogram of a campaign sent with
 * receipts, and the state of every alert rule.
 */
export async function scrapedByPrometheus(stack: BenchStack) {
  if (!installed()) {
    log('prometheus is not installed: the run is not scraped');
    return undefined;
  }
  const prometheus = await startPrometheus(stack.metricsTargets);
  return {
    stop: () => prometheus.stop(),
    async report(stack: BenchStack, run: { from: number; seconds: number }) {
      // Two scrapes a second apart are the least a rate needs; 5 s smooths a scrape's jitter.
      const middle = (run.from + (run.seconds * 1000) / 2) / 1000;
      const sendsQuery = 'sum by (outcome) (rate(herald_sends_total[5s]))';
      const sends = await prometheus.get('/api/v1/query', {
        query: sendsQuery,
        time: String(middle),
      });
      log('receipt-delay phase: one campaign, receipts 1.5 s after each submission');
      const before = await deliveredCount(stack);
      await simulatorBehaviour(stack, RECEIPT_DELAY_MS);
      // The inbox is cleared only once the receipts are in: clearing it cancels those scheduled.
      const { id } = await send(stack, CAMPAIGN_SIZE);
      await drained(stack, [id]);
      await receiptsScraped(prometheus, stack, before + CAMPAIGN_SIZE);
      await clearInbox(stack);
      await simulatorBehaviour(stack, 'none');
      const delayQueries = {
        p50_s:
          'histogram_quantile(0.5, sum by (le) (rate(herald_receipt_delay_seconds_bucket[1m])))',
        p95_s:
          'histogram_quantile(0.95, sum by (le) (rate(herald_receipt_delay_seconds_bucket[1m])))',
      };
      const quantiles = Object.fromEntries(
        await Promise.all(
          Object.entries(delayQueries).map(async ([name, expr]) => {
            const [row] = await prometheus.query(expr);
            return [name, round(Number(row?.value[1]), 3)];
          }),
        ),
      );
      const buckets = await prometheus.query(
        'sum by (le) (herald_receipt_delay_seconds_bucket{status="delivered"})',
      );
      const rules = (await prometheus.get('/api/v1/rules')).data.groups.flatMap(
        (group: { rules: { name: string; health: string; state: string }[] }) => group.rules,
      );
      return {
        scrape_interval_s: 1,
        targets: stack.metricsTargets.length,
        sends_per_s_by_outcome: {
          query: sendsQuery,
          at: new Date(middle * 1000).toISOString(),
          result: Object.fromEntries(
            sends.data.result.map(
              (row: { metric: { outcome: string }; value: [number, string] }) => [
                row.metric.outcome,
                round(Number(row.value[1])),
              ],
            ),
          ),
        },
        receipt_delay: {
          simulator_receipt_delay_ms: RECEIPT_DELAY_MS,
          ...quantiles,
          queries: delayQueries,
          cumulative_buckets: Object.fromEntries(
            buckets
              .sort((a, b) => bucketBound(a.metric.le) - bucketBound(b.metric.le))
              .map((row) => [row.metric.le, Number(row.value[1])]),
          ),
        },
        alert_rules: rules.map((rule: { name: string; health: string; state: string }) => ({
          name: rule.name,
          health: rule.health,
          state: rule.state,
        })),
      };
    },
  };
}

/** A histogram bucket's upper bound, `+Inf` last. */
function bucketBound(le: string | undefined): number {
  return le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
}

async function deliveredCount(stack: BenchStack): Promise<number> {
  const [row] = await stack.sql<{ delivered: number }[]>`
    select count(*)::int as delivered from campaign_messages where delivery_status = 'delivered'`;
  return row?.delivered ?? 0;
}

/** Until Herald has recorded, and Prometheus scraped, `expected` delivered receipts in all. */
async function receiptsScraped(
  prometheus: RunningPrometheus,
  stack: BenchStack,
  expected: number,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [scraped] = await prometheus.query('sum(herald_receipts_total{status="delivered"})');
    if ((await deliveredCount(stack)) >= expected && Number(scraped?.value[1]) >= expected) return;
    if (Date.now() > deadline) throw new Error('the receipts never all arrived');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
