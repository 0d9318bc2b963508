import { runOutage } from '../support/outage.js';
import type { Scenario } from '../support/scenario.js';

/**
 * Postgres is stopped (`pg_ctl stop --mode fast`) for 10 s, twice, while a 400-recipient
 * campaign goes out through a provider paced at 10 messages/s; REST, OTP, /health, OAuth and
 * MCP are probed every 0.5 s throughout. Short: one outage during a 150-recipient campaign.
 */
export const postgresOutage: Scenario = {
  name: 'postgres-outage',
  short: true,
  run: (options) =>
    runOutage(
      {
        dependency: 'postgres',
        recipients: options.short ? 150 : 400,
        messagesPerSecond: 10,
        outages: options.short ? 1 : 2,
        downMs: 10_000,
        firstAfterArrivals: options.short ? 30 : 60,
        gapMs: 8_000,
        requestChecks: true,
      },
      options,
    ),
};
