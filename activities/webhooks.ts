import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Sql } from '../db/client.js';
import {
  disableFailingWebhookEndpoint,
  findWebhookDelivery,
  recordWebhookAttempt,
} from '../db/webhooks.js';
import { webhookBody } from '../domain/webhook-samples.js';
import { WEBHOOK_ATTEMPT_TIMEOUT_MS } from '../domain/webhooks.js';
import { CredentialsError, decryptCredentials } from '../security/credentials.js';
import {
  type HostResolver,
  pinnedLookup,
  type ResolvedAddress,
  resolveWebhookTarget,
  UnsafeUrlError,
} from '../security/ssrf.js';
import { webhookHeaders, webhookSecretContext } from '../security/webhook-signature.js';
import { webhookDeliveries } from '../telemetry/metrics.js';

export interface WebhookActivityDeps {
  sql: Sql;
  /** Decrypts endpoint secrets. */
  secret: string;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: deliver to private, loopback… addresses too. */
  allowPrivateWebhookUrls?: boolean;
  /** How host names are resolved before the SSRF check; the system resolver by default. */
  webhookResolver?: HostResolver;
  /** The limit of one attempt; WEBHOOK_ATTEMPT_TIMEOUT_MS by default. */
  webhookTimeoutMs?: number;
}

export interface DeliverWebhookInput {
  eventId: string;
  endpointId: number;
  attempt: number;
  /** Wait before the next attempt if this one fails; null when it is the last. */
  retryInMs: number | null;
}

export type DeliverWebhookResult =
  | { outcome: 'delivered'; statusCode: number }
  | { outcome: 'failed'; statusCode: number | null; error: string }
  /** The endpoint was disabled or deleted (or the event deleted): nothing was sent. */
  | { outcome: 'skipped'; reason: string };

const USER_AGENT = 'Herald-Webhooks/1';

/** One POST to the checked address: the status once response headers arrive, or an error. */
function post(
  url: URL,
  target: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<{ statusCode: number } | { error: string }> {
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: {
        ...headers,
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': USER_AGENT,
      },
      lookup: pinnedLookup(target) as never,
      // No keep-alive pool: every attempt connects to the address checked for it.
      agent: false,
    });
    const timer = setTimeout(() => {
      request.destroy(new Error(`timed out after ${timeoutMs / 1000} s`));
    }, timeoutMs);
    request.once('response', (response) => {
      clearTimeout(timer);
      // The body is not needed; drain it without holding the attempt.
      response.resume();
      response.once('error', () => {});
      resolve({ statusCode: response.statusCode ?? 0 });
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ error: error.code ? `${error.code}: ${error.message}` : error.message });
    });
    request.end(body);
  });
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const timeoutMs = deps.webhookTimeoutMs ?? WEBHOOK_ATTEMPT_TIMEOUT_MS;

  return {
    /**
     * One signed delivery attempt of an event to an endpoint, logged in webhook_attempts. A
     * response other than 2xx, a timeout, a refused address or a connection error is a failed
     * attempt (returned, not thrown: the workflow's schedule retries it, not Temporal's).
     */
    async deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
      const delivery = await findWebhookDelivery(deps.sql, input.eventId, input.endpointId);
      if (!delivery)
        return { outcome: 'skipped', reason: 'the endpoint or event no longer exists' };
      // Handed over again after it went out (a dispatcher that died before marking it): not twice.
      if (delivery.deliveredStatus !== null)
        return { outcome: 'delivered', statusCode: delivery.deliveredStatus };
      if (!delivery.enabled) return { outcome: 'skipped', reason: 'the endpoint is disabled' };

      const body = webhookBody({
        type: delivery.type,
        createdAt: delivery.createdAt,
        data: JSON.parse(delivery.data),
        test: delivery.test,
      });
      const attemptedAt = new Date();
      const started = performance.now();
      let outcome: { statusCode: number } | { statusCode: number | null; error: string };
      try {
        const context = webhookSecretContext(delivery.workspaceId, delivery.endpointId);
        const signingSecrets = [
          decryptCredentials(deps.secret, context, delivery.secret) as string,
        ];
        // During a rotation's overlap the secret it replaced signs too (one that no longer decrypts,
        // left under a key the ring dropped before `secrets rotate` ran, is left out rather than
        // fail the delivery).
        if (delivery.previousSecret !== null) {
          try {
            signingSecrets.push(
              decryptCredentials(deps.secret, context, delivery.previousSecret) as string,
            );
          } catch (error) {
            if (!(error instanceof CredentialsError)) throw error;
          }
        }
        const url = new URL(delivery.url);
        // Checked on every attempt: DNS may have changed since the endpoint was created.
        const target = await resolveWebhookTarget(url, {
          allowPrivate: deps.allowPrivateWebhookUrls ?? false,
          resolver: deps.webhookResolver,
        });
        const headers = webhookHeaders(
          signingSecrets,
          delivery.webhookId,
          Math.floor(Date.now() / 1000),
          body,
        );
        const response = await post(url, target, headers, body, timeoutMs);
        if ('error' in response) outcome = { statusCode: null, error: response.error };
        else if (response.statusCode >= 200 && response.statusCode < 300)
          outcome = { statusCode: response.statusCode };
        else
          outcome = {
            statusCode: response.statusCode,
            error:
              response.statusCode >= 300 && response.statusCode < 400
                ? `HTTP ${response.statusCode} (redirects are not followed)`
                : `HTTP ${response.statusCode}`,
          };
      } catch (error) {
        outcome = {
          statusCode: null,
          error:
            error instanceof UnsafeUrlError && error.nonPublic
              ? `Refused: ${error.message} (WEBHOOK_ALLOW_PRIVATE_URLS is false)`
              : error instanceof CredentialsError
                ? 'Not sent: the signing secret does not decrypt under this HERALD_SECRET'
                : (error as Error).message,
        };
      }
      const durationMs = Math.round(performance.now() - started);
      const failed = 'error' in outcome;
      await recordWebhookAttempt(deps.sql, {
        endpointId: delivery.endpointId,
        eventRowId: delivery.eventRowId,
        attempt: input.attempt,
        attemptedAt,
        durationMs,
        statusCode: outcome.statusCode,
        error: 'error' in outcome ? outcome.error : null,
        succeeded: !failed,
        nextAttemptAt:
          failed && input.retryInMs !== null
            ? new Date(attemptedAt.getTime() + durationMs + input.retryInMs)
            : null,
      });
      webhookDeliveries.inc({ outcome: failed ? 'failed' : 'delivered' });
      return 'error' in outcome
        ? { outcome: 'failed', statusCode: outcome.statusCode, error: outcome.error }
        : { outcome: 'delivered', statusCode: outcome.statusCode };
    },

    /** The retry schedule is spent: the endpoint gets no new events until an operator enables it. */
    async disableWebhookEndpoint(input: { endpointId: number; reason: string }): Promise<boolean> {
      webhookDeliveries.inc({ outcome: 'exhausted' });
      return disableFailingWebhookEndpoint(deps.sql, input.endpointId, input.reason);
    },
  };
}
