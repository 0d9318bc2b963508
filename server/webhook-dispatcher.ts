import type { Client } from '@temporalio/client';
import type { Sql } from '../db/client.js';
import { lockUndispatchedEvents, markEventsDispatched } from '../db/webhooks.js';
import { startWebhookWorkflow } from '../temporal/workflow-starts.js';

/** The channel the webhook triggers of 0007_webhooks.sql notify when they write events. */
export const WEBHOOK_EVENTS_CHANNEL = 'herald_webhook_events';

const BATCH_SIZE = 100;
/** Workflow starts in flight at once within a batch. */
const START_CONCURRENCY = 10;

export interface WebhookDispatcher {
  /** Finishes the batch in progress, then stops listening and polling. */
  stop(): Promise<void>;
}

/**
 * Moves events from the outbox (webhook_events) to Temporal: one webhookWorkflow per event and
 * endpoint, under a deterministic id, so a start repeated after a crash is a no-op. Rows are
 * locked `for update skip locked` and marked dispatched in the same transaction as their starts:
 * several workers never dispatch one event twice, and an event whose starts did not all succeed
 * stays in the outbox for the next round. Woken by NOTIFY and by a periodic poll (a missed
 * notification, a listener reconnecting, Temporal unreachable for a while).
 */
export function startWebhookDispatcher(options: {
  sql: Sql;
  client: Client;
  pollIntervalMs?: number;
  log?: (line: string) => void;
}): WebhookDispatcher {
  const { sql, client } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let lastError = '';

  /** One batch; true when it was full, so another may be waiting. */
  async function dispatchBatch(): Promise<boolean> {
    return sql.begin(async (tx) => {
      const events = await lockUndispatchedEvents(tx, BATCH_SIZE);
      const starts = events.flatMap((event) =>
        event.endpointIds.map(
          (endpointId) => () => startWebhookWorkflow(client, event, endpointId),
        ),
      );
      for (let index = 0; index < starts.length; index += START_CONCURRENCY) {
        await Promise.all(starts.slice(index, index + START_CONCURRENCY).map((run) => run()));
      }
      if (events.length > 0)
        await markEventsDispatched(
          tx,
          events.map((event) => event.id),
        );
      return events.length === BATCH_SIZE;
    });
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        while (!stopped && (await dispatchBatch())) {}
        lastError = '';
      } catch (error) {
        // Left in the outbox; the next poll tries again. Logged once per distinct error.
        const message = (error as Error).message;
        if (message !== lastError) log(`Webhook dispatch failed, will retry: ${message}`);
        lastError = message;
      }
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().finally(() => {
      running = undefined;
    });
  }

  const listening = sql.listen(WEBHOOK_EVENTS_CHANNEL, wake, wake).catch((error: Error) => {
    log(`Webhook dispatcher cannot LISTEN (polling only): ${error.message}`);
    return undefined;
  });
  const timer = setInterval(wake, options.pollIntervalMs ?? 5_000);
  timer.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await (await listening)?.unlisten().catch(() => {});
      await running;
    },
  };
}
