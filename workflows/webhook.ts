import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { formatDelay, WEBHOOK_RETRY_DELAYS_MS } from '../domain/webhooks.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface WebhookWorkflowInput {
  workspaceId: number;
  /** The event's `msg_…` id (webhook-id). */
  eventId: string;
  endpointId: number;
}

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
 * Delivers one event to one endpoint: an attempt at once, then one after each wait of
 * WEBHOOK_RETRY_DELAYS_MS (durable timers), until a 2xx. When the schedule is spent the endpoint
 * is disabled. An endpoint disabled or deleted meanwhile ends the run without sending.
 */
export async function webhookWorkflow(input: WebhookWorkflowInput): Promise<WebhookWorkflowResult> {
  const delays = WEBHOOK_RETRY_DELAYS_MS;
  let lastError = '';
  for (let attempt = 1; attempt <= delays.length + 1; attempt++) {
    const retryInMs = delays[attempt - 1] ?? null;
    const result = await deliverWebhook({
      eventId: input.eventId,
      endpointId: input.endpointId,
      attempt,
      retryInMs,
    });
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
    endpointId: input.endpointId,
    reason:
      `Disabled after ${delays.length + 1} failed attempts to deliver ${input.eventId} ` +
      `(retry schedule of ${formatDelay(delays.reduce((sum, delay) => sum + delay, 0))} spent); ` +
      `last error: ${lastError}`,
  });
  setRunStatus('failed');
  return 'failed';
}
