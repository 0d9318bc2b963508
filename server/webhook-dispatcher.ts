import type { Client } from '@temporalio/client';
import type { Sql } from '../db/client.js';
import { lockUndispatchedEvents, markEventsDispatched } from '../db/webhooks.js';
import { startWebhookWorkflow } from '../temporal/workflow-starts.js';

/** The channel the webhook triggers of 0007_webhooks.sql notify when they write events. */
export const WEBHOOK_EVENTS_CHANNEL = 'herald_webhook_events';

const BATCH_SIZE = 100;
/** Lanes handed over at once within a batch (a lane's own events go one after another). */
const START_CONCURRENCY = 10;
/** How soon to look again at events held back behind another dispatcher's batch. */
const HELD_BACK_RETRY_MS = 250;

export interface WebhookDispatcher {
  /** Finishes the batch in progress, then stops listening and polling. */
  stop(): Promise<void>;
}

/**
 * Moves events from the outbox (webhook_events) to Temporal: each event is signalled to the
 * delivery run of its lane — its subject (one message, one OTP request, one campaign) and one
 * endpoint — which delivers a lane's events one at a time in the order they reach it. So the
 * order is kept here: a lane's events of one batch are handed over one after another, batches
 * one after another, and an event whose subject has an earlier event in another dispatcher's
 * batch waits until that one is handed over. Rows are locked `for update skip locked` and marked
 * dispatched in the same transaction as their hand-over: several workers never dispatch one event
 * twice, and an event handed over again after a crash is recognised by its run or, once that run
 * has ended, by its delivery log. Woken by NOTIFY and by a periodic poll (a missed notification,
 * a listener reconnecting, Temporal unreachable for a while).
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
  let heldBackTimer: NodeJS.Timeout | undefined;

  /** One batch: whether it was full (another may be waiting) and whether events were held back. */
  async function dispatchBatch(): Promise<{ full: boolean; heldBack: boolean }> {
    return sql.begin(async (tx) => {
      const events = await lockUndispatchedEvents(tx, BATCH_SIZE);
      const ready = events.filter((event) => !event.waitsForEarlier);
      const lanes = new Map<string, (() => Promise<void>)[]>();
      for (const event of ready)
        for (const endpointId of event.endpointIds) {
          const lane = `${event.workspaceId}/${event.subject}/${endpointId}`;
          const handOver = () => startWebhookWorkflow(client, event, endpointId);
          lanes.set(lane, [...(lanes.get(lane) ?? []), handOver]);
        }
      const chains = [...lanes.values()].map((chain) => async () => {
        for (const handOver of chain) await handOver();
      });
      for (let index = 0; index < chains.length; index += START_CONCURRENCY) {
        await Promise.all(chains.slice(index, index + START_CONCURRENCY).map((run) => run()));
      }
      if (ready.length > 0)
        await markEventsDispatched(
          tx,
          ready.map((event) => event.id),
        );
      // A batch of held-back events only is not full: the same rows would come straight back.
      return {
        full: events.length === BATCH_SIZE && ready.length > 0,
        heldBack: ready.length < events.length,
      };
    });
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        let batch = { full: true, heldBack: false };
        while (!stopped && batch.full) {
          batch = await dispatchBatch();
          if (batch.heldBack) lookAgainSoon();
        }
        lastError = '';
      } catch (error) {
        // Left in the outbox; the next poll tries again. Logged once per distinct error.
        const message = (error as Error).message;
        if (message !== lastError) log(`Webhook dispatch failed, will retry: ${message}`);
        lastError = message;
      }
    } while (again && !stopped);
  }

  function lookAgainSoon(): void {
    if (heldBackTimer || stopped) return;
    heldBackTimer = setTimeout(() => {
      heldBackTimer = undefined;
      wake();
    }, HELD_BACK_RETRY_MS);
    heldBackTimer.unref();
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
      clearTimeout(heldBackTimer);
      await (await listening)?.unlisten().catch(() => {});
      await running;
    },
  };
}
