import { setTimeout as sleep } from 'node:timers/promises';
import { SpanStatusCode } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { Logger } from '@temporalio/common';
import type { Sql } from '../db/client.js';
import { findProviders } from '../db/providers.js';
import { OWN_PROVIDER_SLUG } from '../domain/provider-definition.js';
import {
  resolveProviders as adaptersOf,
  type ProviderRegistryConfig,
} from '../providers/registry.js';
import type { OutboundSms, SmsProvider, SubmitOutcome, WriteNow } from '../providers/types.js';
import { withoutPhoneNumbers } from '../telemetry/log-lines.js';
import { providerCallDuration, secondsSince, sends, throughputWait } from '../telemetry/metrics.js';
import { inSpan } from '../telemetry/tracing.js';
import type { SubmissionFence } from './lease.js';
import type { Pacer } from './throughput.js';

/**
 * Adapters for a workspace's providers, in the order asked (`own` included), from their records
 * in Postgres; with the worker's SMPP binds when `config` carries them (ActivityDeps).
 */
export async function resolveProviders(
  sql: Sql,
  config: ProviderRegistryConfig,
  workspaceId: number,
  slugs: string[],
): Promise<SmsProvider[]> {
  const stored = slugs.filter((slug) => slug !== OWN_PROVIDER_SLUG);
  const records = stored.length > 0 ? await findProviders(sql, workspaceId, stored) : [];
  return adaptersOf(records, config, workspaceId, slugs);
}

/**
 * One call to the provider, as a `provider.submit` span (its provider and outcome: never the
 * number or the body); a submission that did not go through is logged as a warning, with the
 * activity's context (workflowId, runId, activityType, attempt) that Temporal's logger adds.
 */
async function submitTraced(provider: SmsProvider, message: OutboundSms): Promise<SubmitOutcome> {
  return inSpan('provider.submit', { 'herald.provider': provider.slug }, async (span) => {
    const outcome = await provider.submit(message);
    span.setAttribute('herald.submission.outcome', outcome.kind);
    if (outcome.kind === 'failed' || outcome.kind === 'unknown') {
      span.setStatus({ code: SpanStatusCode.ERROR });
      activityLog()?.warn('Provider submission did not go through', {
        provider: provider.slug,
        outcome: outcome.kind,
        reason: withoutPhoneNumbers(outcome.reason),
      });
    }
    return outcome;
  });
}

/** The running activity's logger; none outside an activity (a unit test calling directly). */
function activityLog(): Logger | undefined {
  try {
    return Context.current().log;
  } catch {
    return undefined;
  }
}

/** The write of an adapter that writes once `beforeWrite` resolved (HTTP): nothing to do here. */
const writeOnResolve: WriteNow = Object.assign(() => {}, {
  together: (writes: WriteNow[]) => {
    for (const write of writes) write();
  },
});

/** Waits between resubmissions after a retryable failure; then the failure stands. */
const RETRY_DELAYS_MS = [200, 1000, 3000];

export type SubmissionOutcome = SubmitOutcome | { kind: 'expired'; reason: string };

export interface SubmissionGuards {
  /** Asked right before every submission is written; throws when this attempt may not send. */
  fence: SubmissionFence;
  /**
   * Runs once, right before the first submission is written (and before the fence): inside the
   * adapter, after its own waits (OutboundSms.beforeWrite), so what it marks has left or is
   * leaving Herald. A throw there writes nothing and is thrown from here.
   */
  beforeFirstSubmission?: () => Promise<WriteMark | undefined>;
}

/**
 * What a claim made at write time may hand back (db/submission-writes.ts): committed right before
 * the write, after the fence, or given up when the submission is not written.
 */
export interface WriteMark {
  /**
   * Commits the mark, `write` (the adapter's, writing the message at once) running right after
   * the COMMIT reached its socket, in the same synchronous block; rejects, nothing written, when
   * the COMMIT could not be sent.
   */
  commit(write: WriteNow): Promise<void>;
  giveUp(): void;
}

/**
 * Submits, resubmitting only after `failed` (the provider said nothing was accepted), and no
 * sooner than the provider's `Retry-After`. Never after `unknown`: that could send twice. Every
 * attempt waits for a slot of the provider's throughput; a message whose validity period ends
 * while it waits is not submitted at all.
 */
export async function submitWithRetries(
  provider: SmsProvider,
  message: OutboundSms,
  pacer: Pacer,
  guards: SubmissionGuards,
  kind: 'campaign' | 'otp',
): Promise<SubmissionOutcome> {
  const label = providerLabel(provider);
  let before = guards.beforeFirstSubmission;
  const attempt = async (): Promise<SubmissionOutcome> => {
    const waitStarted = performance.now();
    await pacer.wait(provider);
    if (provider.messagesPerSecond !== null)
      throughputWait.observe({ provider: label }, secondsSince(waitStarted));
    if (message.validUntil && Date.now() >= message.validUntil.getTime())
      return { kind: 'expired', reason: 'validity period ended before it could be submitted' };
    const beforeWrite = async (write?: WriteNow) => {
      const mark = await before?.();
      before = undefined;
      try {
        await guards.fence.ensure();
      } catch (error) {
        mark?.giveUp();
        throw error;
      }
      // An adapter that cannot write at once writes when this resolves, as without a mark.
      await mark?.commit(write ?? writeOnResolve);
    };
    const called = performance.now();
    const answer = await submitTraced(provider, { ...message, beforeWrite });
    providerCallDuration.observe({ provider: label, outcome: answer.kind }, secondsSince(called));
    return answer;
  };
  let outcome = await attempt();
  for (const delay of RETRY_DELAYS_MS) {
    if (outcome.kind !== 'failed') break;
    await sleep(Math.max(delay, outcome.retryAfterMs ?? 0));
    outcome = await attempt();
  }
  sends.inc({ kind, provider: label, outcome: outcome.kind });
  return outcome;
}

/** `own` (the operator's provider) or the vendor: never a workspace's own slug, unbounded. */
function providerLabel(provider: SmsProvider): string {
  return provider.slug === OWN_PROVIDER_SLUG ? OWN_PROVIDER_SLUG : provider.vendor;
}
