import type { TransactionSql } from '../db/client.js';
import { FIRST_TRY_MAX_MESSAGES, type OtpFirstTry } from '../domain/first-try.js';
import {
  type CampaignActivityDeps,
  type ChunkRunner,
  type ChunkStart,
  chunkLeaseKey,
  dropMarkAhead,
  openMarkAhead,
  providerChain,
  readChunk,
} from './campaign.js';
import { SubmissionLease } from './lease.js';
import type { OtpSubmitter } from './otp.js';
import { createPacer, type Pacer } from './throughput.js';

/** As long as the run's own local first try may take (workflows/campaign.ts). */
const FIRST_TRY_TIMEOUT_MS = 30_000;
/**
 * Longest a campaign's start waits for its first try: on a small machine the two compete for the
 * same cores, and the message on the wire is what the caller is waiting for.
 */
const HEAD_START_MS = 50;

/** Settles when `work` does or after `ms`, whichever comes first, leaving no timer behind. */
function settledOrAfter(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const after = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([work, after]).finally(() => clearTimeout(timer));
}

/**
 * First tries made beside a campaign's start, in a process that runs the api and a worker: the
 * moment the campaign is saved, its messages go to the provider through this worker's chunk
 * runner, without waiting for Temporal to start its run and hand the work out. Its run starts as
 * usual and takes on whatever the try leaves (a failure, a crash, messages held for quiet hours):
 * the try holds the chunk's submission lease, taken in the save's own transaction, which the
 * run's attempts wait for and never share.
 */
export function createFirstTries(
  deps: CampaignActivityDeps,
  runChunk: ChunkRunner,
  submitter: OtpSubmitter,
  options: {
    /** First tries at once at most; a busier process leaves the rest to the runs. */
    slots: number;
    log: (message: string) => void;
  },
) {
  let reserved = 0;
  const running = new Set<Promise<void>>();
  return {
    /**
     * A first try for a send about to be saved, when it is small, due now and a slot is free;
     * else undefined (its run sends it). Exactly one of `begin` and `cancel` ends it.
     */
    reserve(send: { messages: number; scheduledAt: Date | null }) {
      if (send.messages > FIRST_TRY_MAX_MESSAGES || send.scheduledAt !== null) return undefined;
      if (reserved >= options.slots) return undefined;
      reserved += 1;
      const signal = AbortSignal.timeout(FIRST_TRY_TIMEOUT_MS);
      let lease: SubmissionLease | undefined;
      let start: ChunkStart | undefined;
      let pacer: Pacer | undefined;
      let campaignId = 0;
      let ended = false;
      const end = () => {
        if (!ended) reserved -= 1;
        ended = true;
      };
      return {
        /**
         * In the save's transaction: the campaign's first chunk is held for this try, and what
         * the try starts from is read there too, in the same round trip; its first provider's
         * slots are then reserved while the save commits.
         */
        async hold(tx: TransactionSql, id: number): Promise<void> {
          campaignId = id;
          const chunk = { campaignId: id, fromSeq: 1, toSeq: send.messages };
          [lease, start] = await Promise.all([
            SubmissionLease.takeWithin(tx, deps.sql, chunkLeaseKey(id, 1), signal),
            readChunk(tx, chunk),
          ]);
          if (!lease || !start.campaign) return;
          const [first] = providerChain(deps, start.campaign, start.records);
          pacer = createPacer(deps.sql, start.campaign.workspaceId);
          if (first) pacer.reserveAhead(first, start.pending.length);
          // Its claim's write mark too (SMPP), so that the claim is one round trip alone.
          if (first && !first.lookup) openMarkAhead(lease);
        },
        /**
         * Once saved: submits its `messages`. Settles when the try has ended, or after its head
         * start: what the campaign's start waits for.
         */
        begin(messages: number): Promise<void> {
          if (!lease || messages === 0) {
            if (lease) dropMarkAhead(lease);
            void lease?.close();
            end();
            return Promise.resolve();
          }
          const attempt: Promise<void> = runChunk(
            { campaignId, fromSeq: 1, toSeq: messages, quietHours: true },
            { run: 'first_try', beat: () => {}, lease, start, pacer },
          )
            .then(() => {})
            .catch((error: unknown) => {
              const reason = error instanceof Error ? error.message : String(error);
              options.log(
                `campaign ${campaignId}: its first try stopped (${reason}); its run takes it on`,
              );
            })
            .finally(() => {
              running.delete(attempt);
              end();
            });
          running.add(attempt);
          return settledOrAfter(attempt, HEAD_START_MS);
        },
        /** Not saved: the slot is free again, and the lease (never committed) let go. */
        cancel(): void {
          if (lease) dropMarkAhead(lease);
          void lease?.close();
          end();
        },
      };
    },
    /**
     * An OTP request just saved: its code is submitted now, before its run starts, which finds
     * it claimed and reports its outcome. Settles when the try has ended, or after `waitMs`
     * (the answer's deadline); what it could not do (Postgres away, say) its run does.
     */
    code(request: OtpFirstTry, waitMs: number): Promise<void> {
      const attempt = submitter
        .submit(request, AbortSignal.timeout(FIRST_TRY_TIMEOUT_MS))
        .then(() => {})
        .catch((error: unknown) => {
          const reason = error instanceof Error ? error.message : String(error);
          options.log(
            `OTP request ${request.requestId}: its first try stopped (${reason}); its run takes it on`,
          );
        })
        .finally(() => running.delete(attempt));
      running.add(attempt);
      return settledOrAfter(attempt, waitMs);
    },
    /** Settles once no first try is in flight: before the worker closes its SMPP binds. */
    async drain(): Promise<void> {
      await Promise.allSettled([...running]);
    },
  };
}
