import { runOutage } from '../support/outage.js';
import type { Scenario } from '../support/scenario.js';

/**
 * The Temporal dev server is killed (SIGKILL) for 12 s while a 400-recipient campaign goes out
 * through a provider paced at 10 messages/s, then started again on its database and port.
 */
export const temporalOutage: Scenario = {
  name: 'temporal-outage',
  short: false,
  run: (options) =>
    runOutage(
      {
        dependency: 'temporal',
        recipients: 400,
        messagesPerSecond: 10,
        outages: 1,
        downMs: 12_000,
        firstAfterArrivals: 100,
        gapMs: 0,
        requestChecks: false,
      },
      options,
    ),
};
