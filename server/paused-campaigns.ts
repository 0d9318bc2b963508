import type { Client } from '@temporalio/client';
import { dispatchPausedCampaigns } from '../commands/messaging/dispatch-paused.js';
import type { Sql } from '../db/client.js';

export interface PausedCampaignSweeper {
  /** Finishes the sweep in progress, then stops. */
  stop(): Promise<void>;
}

/**
 * Beside every worker: every `intervalMs`, dispatches the campaigns left paused
 * (commands/messaging/dispatch-paused.ts), so that a send answered `paused` is sent once Temporal is back
 * without anyone retrying it. Several workers may sweep at once: a campaign still runs once.
 */
export function startPausedCampaignSweeper(options: {
  sql: Sql;
  client: Client;
  intervalMs?: number;
  log?: (line: string) => void;
}): PausedCampaignSweeper {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let running: Promise<void> | undefined;
  let lastError = '';

  const sweep = async () => {
    try {
      const { found, dispatched } = await dispatchPausedCampaigns({
        sql: options.sql,
        temporal: options.client,
      });
      if (found > 0)
        log(
          `Paused campaigns: ${dispatched} of ${found} dispatched${dispatched < found ? '; the rest wait for Temporal' : ''}.`,
        );
      lastError = '';
    } catch (error) {
      // Postgres away: the next sweep tries again. Logged once per distinct error.
      const message = (error as Error).message;
      if (message !== lastError) log(`Sweeping paused campaigns failed, will retry: ${message}`);
      lastError = message;
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => {
      running = undefined;
    });
  }, options.intervalMs ?? 5_000);
  timer.unref();

  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
