import { defineSignal, patched, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { formatDelay, WEBHOOK_RETRY_DELAYS_MS } from '../domain/webhooks.js';
import { WEBHOOK_EVENT_SIGNAL, type WebhookEventSignal } from './definitions.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface WebhookWorkflowInput {
  workspaceId: number;
  /** The event's `msg_…` id (webhook-id): the first of the run. */
  eventId: string;
  endpointId: number;
}

export const webhookEventSignal = defineSignal<[WebhookEventSignal]>(WEBHOOK_EVENT_SIGNAL);

/**
 * Runs started before this patch deliver their one event; those after are a lane's run and take
 * its later events by signal, delivering them one at a time in the order they came.
 */
const LANES_PATCH = 'webhook-lanes';

export type WebhookWorkflowResult = 'delivered' | 'failed' | 'skipped';

/**
 * One attempt is one POST of at most WEBHOOK_ATTEMPT_TIMEOUT_MS (15 s) plus a DNS lookup and two
 * queries: a minute means the worker or Postgres is in trouble, not the endpoint.
 */
const ONE_ATTEMPT_TIMEOUT = '1 minute';

// HTTP failures come back as results; only infrastructure errors (Postgres down, a worker lost)
// are retried here, and such a retry logs over its attempt's row.
const { deliverWebhook, disableWebhookEndpoint } = proxyActivities<Activities>({
  startToCloseTimeout: ONE_ATTEMPT_TIMEOUT,
  retry: retryUnlessPermanent({
    initialInterval: '1 second',
    maximumInterval: '1 minute',
    backoffCoefficient: 2,
  }),
});

/**
 * Delivers the events of one subject (a message, an OTP request, a campaign) to one endpoint in
 * the order they happened: each one as below, and the next only once the one before it is
 * delivered, skipped, or failed for good (which disables the endpoint, so the rest are skipped).
 * An event signalled twice is delivered once. The run ends when none is left; the dispatcher
 * starts a new one for the lane's next event.
 */
export async function webhookWorkflow(input: WebhookWorkflowInput): Promise<WebhookWorkflowResult> {
  if (!patched(LANES_PATCH)) return deliverEvent(input.eventId, input.endpointId);
  const queue = [input.eventId];
  const seen = new Set(queue);
  setHandler(webhookEventSignal, ({ eventId }) => {
    if (seen.has(eventId)) return;
    seen.add(eventId);
    queue.push(eventId);
  });
  const results: WebhookWorkflowResult[] = [];
  for (let eventId = queue.shift(); eventId !== undefined; eventId = queue.shift())
    results.push(await deliverEvent(eventId, input.endpointId));
  const result = results.includes('failed')
    ? 'failed'
    : results.includes('delivered')
      ? 'delivered'
      : 'skipped';
  if (result !== results.at(-1)) setRunStatus(result);
  return result;
}

/**
 * Delivers one event to one endpoint: an attempt at once, then one after each wait of
 * WEBHOOK_RETRY_DELAYS_MS (durable timers), until a 2xx. When the schedule is spent the endpoint
 * is disabled. An endpoint disabled or deleted meanwhile ends the run without sending.
 */
async function deliverEvent(eventId: string, endpointId: number): Promise<WebhookWorkflowResult> {
  const delays = WEBHOOK_RETRY_DELAYS_MS;
  let lastError = '';
  for (let attempt = 1; attempt <= delays.length + 1; attempt++) {
    const retryInMs = delays[attempt - 1] ?? null;
    const result = await deliverWebhook({ eventId, endpointId, attempt, retryInMs });
    if (result.outcome === 'delivered') {
      setRunStatus('delivered');
      return 'delivered';
    }
    if (result.outcome === 'skipped') {
      setRunStatus('skipped');
      return 'skipped';
    }
    lastError = result.error;
    if (retryInMs === null) break;
    setRunStatus('retrying');
    await sleep(retryInMs);
  }
  await disableWebhookEndpoint({
    endpointId,
    reason:
      `Disabled after ${delays.length + 1} failed attempts to deliver ${eventId} ` +
      `(retry schedule of ${formatDelay(delays.reduce((sum, delay) => sum + delay, 0))} spent); ` +
      `last error: ${lastError}`,
  });
  setRunStatus('failed');
  return 'failed';
}
