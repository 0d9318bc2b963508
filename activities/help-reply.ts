/**
 * HELP's automatic answer (workflows/help-reply.ts): the workspace's help text, sent through the
 * provider the reply came in on, from the sender it was sent to. The claim is taken once, so a
 * retried or concurrent attempt never submits a second time: it asks the provider instead.
 */
import { Context } from '@temporalio/activity';
import type { Sql } from '../db/client.js';
import {
  claimHelpReply,
  findHelpReply,
  type HelpReply,
  settleHelpReply,
} from '../db/inbound-messages.js';
import type { SmppSessions } from '../providers/smpp/sessions.js';
import { fixedFence, LeaseLost, SUBMISSION_LEASE_MS } from './lease.js';
import { resolveProviders, submitWithRetries } from './submission.js';
import { createPacer } from './throughput.js';

export interface HelpReplyActivityDeps {
  sql: Sql;
  secret: string;
  ownProviderUrl: string;
  ownProviderMessagesPerSecond?: number | null;
  smppSessions?: SmppSessions;
}

export type HelpReplyStatus = 'sent' | 'failed' | 'none';

/** The reference the answer is submitted under: the provider can be asked about it. */
export const helpReplyReference = (inboundId: number) => `inb-${inboundId}`;

export function createHelpReplyActivities(deps: HelpReplyActivityDeps) {
  async function providerFor(reply: HelpReply) {
    const [provider] = await resolveProviders(deps.sql, deps, reply.workspaceId, [
      reply.providerSlug,
    ]);
    return provider;
  }

  /** An earlier attempt took the claim: only the provider knows whether it went out. */
  async function settled(reply: HelpReply): Promise<HelpReplyStatus> {
    if (reply.status !== 'submitting') return reply.status === 'sent' ? 'sent' : 'failed';
    const provider = await providerFor(reply);
    const found = await provider?.lookup?.(helpReplyReference(reply.id)).catch(() => undefined);
    if (found?.found) {
      await settleHelpReply(deps.sql, reply.id, {
        status: 'sent',
        providerMessageId: found.providerMessageId,
      });
      return 'sent';
    }
    // Never submitted again: a second answer is worse than none.
    await settleHelpReply(deps.sql, reply.id, {
      status: 'failed',
      error: 'outcome unknown: an earlier attempt was interrupted',
    });
    return 'failed';
  }

  return {
    async sendHelpReply({ inboundId }: { inboundId: number }): Promise<HelpReplyStatus> {
      const claimedAt = performance.now();
      const reply = await claimHelpReply(deps.sql, inboundId);
      if (!reply) {
        const earlier = await findHelpReply(deps.sql, inboundId);
        return earlier ? settled(earlier) : 'none';
      }
      const provider = await providerFor(reply);
      if (!provider) {
        await settleHelpReply(deps.sql, inboundId, {
          status: 'failed',
          error: `provider ${reply.providerSlug} is not active`,
        });
        return 'failed';
      }
      const fence = fixedFence(
        claimedAt + SUBMISSION_LEASE_MS,
        Context.current().cancellationSignal,
      );
      const outcome = await submitWithRetries(
        provider,
        {
          to: reply.to,
          from: reply.from,
          body: reply.body,
          reference: helpReplyReference(inboundId),
          callbackUrl: null,
        },
        createPacer(deps.sql, reply.workspaceId),
        { fence },
        'otp',
      ).catch((error: unknown) => {
        if (!(error instanceof LeaseLost)) throw error;
        return { kind: 'failed' as const, reason: `not submitted: ${error.message}` };
      });
      if (outcome.kind === 'accepted') {
        await settleHelpReply(deps.sql, inboundId, {
          status: 'sent',
          providerMessageId: outcome.providerMessageId,
        });
        return 'sent';
      }
      if (outcome.kind === 'unknown') return settled(reply);
      await settleHelpReply(deps.sql, inboundId, {
        status: 'failed',
        error: `${provider.slug}: ${outcome.reason}`,
      });
      return 'failed';
    },
  };
}
