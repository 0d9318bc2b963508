import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { GUARD_RULES } from '../domain/fraud-guard.js';

/*
 * Herald's Prometheus metrics: one registry per process, served on METRICS_PORT
 * (server/metrics-server.ts). Labels are bounded sets only: routes as templates, HTTP statuses,
 * provider vendors (`own`, simulator, twilio, smpp: never a workspace's provider slug), outcomes,
 * statuses and guard rules. No workspace, number, body or code is ever a label: per-workspace
 * figures live in the reports (console, MCP, `herald campaign`), where they are scoped by access.
 */

export const registry = new Registry();
const registers = [registry];

/** Latencies from a millisecond to ten seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A receipt comes seconds to hours after its submission. */
const RECEIPT_DELAY_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];

export const httpRequestDuration = new Histogram({
  name: 'herald_http_request_duration_seconds',
  help: 'HTTP requests answered by the api, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const sends = new Counter({
  name: 'herald_sends_total',
  help: "Messages handed to a provider, by kind (campaign, otp), provider vendor and the provider's answer (accepted, rejected, failed, unknown, expired)",
  labelNames: ['kind', 'provider', 'outcome'] as const,
  registers,
});

export const campaignStarts = new Counter({
  name: 'herald_campaign_starts_total',
  help: "Campaign runs started, by whether Temporal handed the first workflow task straight to this process's worker (eager: true) or it went through a poll",
  labelNames: ['eager'] as const,
  registers,
});

export const campaignChunks = new Counter({
  name: 'herald_campaign_chunks_total',
  help: "Chunks of campaigns a worker ran, by how: `first_try` (a small campaign's, beside its start in a process that also serves the api), `local` (a small campaign's, inside its workflow task) or `activity`",
  labelNames: ['run'] as const,
  registers,
});

export const unwrittenClaims = new Counter({
  name: 'herald_unwritten_claims_total',
  help: 'Campaign messages an interrupted attempt had claimed for an SMPP provider but provably never written (the write mark of their batch never committed): the attempt that took over sends them instead of failing them as outcome unknown',
  registers,
});

export const providerCallDuration = new Histogram({
  name: 'herald_provider_call_duration_seconds',
  help: 'One submission to a provider, request to answer, by provider vendor and outcome',
  labelNames: ['provider', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const throughputWait = new Histogram({
  name: 'herald_throughput_wait_seconds',
  help: "Time a submission waited for a slot of its provider's messages-per-second limit",
  labelNames: ['provider'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const receipts = new Counter({
  name: 'herald_receipts_total',
  help: 'Delivery receipts recorded, by status',
  labelNames: ['status'] as const,
  registers,
});

export const receiptDelay = new Histogram({
  name: 'herald_receipt_delay_seconds',
  help: "From a message's submission to its delivery receipt",
  labelNames: ['status'] as const,
  buckets: RECEIPT_DELAY_BUCKETS,
  registers,
});

export const otpOutcomes = new Counter({
  name: 'herald_otp_outcomes_total',
  help: 'OTP sends answered (accepted, pending, failed) and verifications (verified, failed_verification, exhausted)',
  labelNames: ['outcome'] as const,
  registers,
});

export const guardRefusals = new Counter({
  name: 'herald_guard_refusals_total',
  help: 'Requests the fraud guard refused, by rule',
  labelNames: ['rule'] as const,
  registers,
});

export const webhookDeliveries = new Counter({
  name: 'herald_webhook_deliveries_total',
  help: "Webhook delivery attempts, by outcome (delivered, failed: the endpoint's answer or no answer; exhausted: given up)",
  labelNames: ['outcome'] as const,
  registers,
});

// Every known label value from zero, so a rate is defined before the first event and an alert's
// ratio sees its whole denominator.
for (const rule of GUARD_RULES) guardRefusals.inc({ rule }, 0);
for (const outcome of [
  'accepted',
  'pending',
  'failed',
  'verified',
  'failed_verification',
  'exhausted',
])
  otpOutcomes.inc({ outcome }, 0);
for (const outcome of ['delivered', 'failed', 'exhausted']) webhookDeliveries.inc({ outcome }, 0);
for (const status of ['delivered', 'undelivered', 'unknown']) {
  receipts.inc({ status }, 0);
  receiptDelay.zero({ status });
}
throughputWait.zero({ provider: 'own' });

/**
 * What the process's gauges read when scraped; set by the composition root (server/). A read
 * that fails (Postgres away) gives undefined: those gauges keep their last value, and the rest
 * of the scrape still answers.
 */
export interface MetricSources {
  /** Queued campaign messages and the age of the oldest, across every workspace. */
  backlog: () => Promise<{ messages: number; oldestSeconds: number } | undefined>;
  /** Herald's connections to its database, by state, as Postgres counts them. */
  connections: () => Promise<{ state: string; connections: number }[] | undefined>;
  /** This process's Postgres pool size. */
  poolMax: number;
}

let sources: MetricSources | undefined;

export function setMetricSources(given: MetricSources): void {
  sources = given;
}

new Gauge({
  name: 'herald_campaign_backlog_messages',
  help: 'Campaign messages queued and not yet submitted, across workspaces (every process reports the same: aggregate with max)',
  registers,
  async collect() {
    const backlog = await sources?.backlog();
    if (backlog) this.set(backlog.messages);
  },
});

new Gauge({
  name: 'herald_campaign_backlog_oldest_seconds',
  help: 'Age of the oldest sending campaign that still has queued messages (0: none)',
  registers,
  async collect() {
    const backlog = await sources?.backlog();
    if (backlog) this.set(backlog.oldestSeconds);
  },
});

new Gauge({
  name: 'herald_db_pool_connections_max',
  help: "This process's Postgres pool size",
  registers,
  collect() {
    if (sources) this.set(sources.poolMax);
  },
});

new Gauge({
  name: 'herald_db_connections',
  help: "Connections of every Herald process to Herald's database, by state, as Postgres counts them (aggregate with max)",
  labelNames: ['state'] as const,
  registers,
  async collect() {
    const rows = await sources?.connections();
    if (!rows) return;
    this.reset();
    for (const row of rows) this.set({ state: row.state }, row.connections);
  },
});

/** A receipt the message now holds: counted, and its delay from the submission observed. */
export function observeReceipt(
  status: string,
  recorded: { kept: boolean; delaySeconds: number | null },
): void {
  if (!recorded.kept) return;
  receipts.inc({ status });
  // A provider's clock may run a little behind Herald's: a negative delay is not a delay.
  if (recorded.delaySeconds !== null)
    receiptDelay.observe({ status }, Math.max(0, recorded.delaySeconds));
}

/** Seconds since `startedAt` (a performance.now() reading). */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
