import { FIRST_TRY_MAX_MESSAGES, type SavedCampaignForFirstTry } from '../domain/first-try.js';
import type { ChunkRunner } from './campaign.js';
import { SubmissionLease } from './lease.js';

/** As long as the run's own local first try may take (workflows/campaign.ts). */
const FIRST_TRY_TIMEOUT_MS = 30_000;

/**
 * First tries made beside a campaign's start, in a process that runs the api and a worker: the
 * moment the campaign is saved, its messages go to the provider through this worker's chunk
 * runner, without waiting for Temporal to start its run and hand the work out. Its run starts as
 * usual and takes on whatever the try leaves (a failure, a crash, messages held for quiet hours):
 * the try holds the chunk's submission lease, which the run's attempts wait for and never share,
 * and it never waits for a lease somebody else holds.
 */
export function createFirstTries(
  runChunk: ChunkRunner,
  options: {
    /** First tries at once at most; a busier process leaves the rest to the runs. */
    slots: number;
    log: (message: string) => void;
  },
) {
  const running = new Set<Promise<void>>();
  return {
    /** Starts the first try of a campaign just saved, when it is small and due now; returns at once. */
    begin(campaign: SavedCampaignForFirstTry): void {
      if (campaign.messages > FIRST_TRY_MAX_MESSAGES || campaign.scheduledAt !== null) return;
      if (running.size >= options.slots) return;
      const signal = AbortSignal.timeout(FIRST_TRY_TIMEOUT_MS);
      const attempt: Promise<void> = runChunk(
        { campaignId: campaign.campaignId, fromSeq: 1, toSeq: campaign.messages, quietHours: true },
        {
          run: 'first_try',
          beat: () => {},
          lease: (sql, key) => SubmissionLease.acquireIfFree(sql, key, signal),
        },
      )
        .then(() => {})
        .catch((error: unknown) => {
          const reason = error instanceof Error ? error.message : String(error);
          options.log(
            `campaign ${campaign.campaignId}: its first try stopped (${reason}); its run takes it on`,
          );
        })
        .finally(() => running.delete(attempt));
      running.add(attempt);
    },
    /** Settles once no first try is in flight: before the worker closes its SMPP binds. */
    async drain(): Promise<void> {
      await Promise.allSettled([...running]);
    },
  };
}
