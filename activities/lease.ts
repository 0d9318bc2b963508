import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql, TransactionSql } from '../db/client.js';
import {
  claimFreeLease,
  claimLease,
  newLeaseToken,
  releaseLease,
  renewLease,
} from '../db/submission-leases.js';

/**
 * Fenced submissions (docs/reliability.md "Exactly once"). Work that submits to a provider holds a lease in
 * Postgres: a successor takes the work over only after the lease ended by Postgres's clock, and a
 * holder starts a submission only while at least MAX_SUBMISSION_MS of its lease is left, measured
 * on its own monotonic clock from the moment it asked for the lease. Every provider call ends
 * (answer or timeout) within MAX_SUBMISSION_MS, so no submission of a holder is still in flight
 * when its successor looks the message up: the two can never both send it.
 */

/** How long a lease lasts from its last renewal: a dead holder delays its successor this long. */
export const SUBMISSION_LEASE_MS = 15_000;
/**
 * Longest a provider call may last (every adapter times out at 10 s, plus room for the provider
 * to record what it was sent); a submission starts only with this much lease left.
 */
export const MAX_SUBMISSION_MS = 12_000;
const RENEW_EVERY_MS = 2_000;
/**
 * How long after a submission was marked a provider may still record it (an overloaded one reads
 * a request late, even one its caller gave up on): "not found" before then proves nothing, so
 * nobody resends or counts it failed on it. One lease: a successor taking over from a dead holder
 * has mostly waited it out already.
 */
export const RECORDING_GRACE_MS = SUBMISSION_LEASE_MS;
/**
 * How often an attempt waiting for a held lease asks again: soon at first (a small campaign's
 * first try, made beside its start, holds it for milliseconds), then every second.
 */
const FIRST_CLAIM_POLL_MS = 20;
const CLAIM_POLL_MS = 1_000;

/** The attempt no longer holds its lease: it must not submit. */
export class LeaseLost extends Error {
  constructor(reason: string) {
    super(`submission lease lost: ${reason}`);
    this.name = 'LeaseLost';
  }
}

/** What a submission asks right before it leaves Herald. */
export interface SubmissionFence {
  /** Resolves when a submission may start now; throws LeaseLost when it may not. */
  ensure(): Promise<void>;
}

/** A lease that cannot be renewed: held until `deadline` (performance.now() milliseconds). */
export function fixedFence(deadline: number, signal?: AbortSignal): SubmissionFence {
  return {
    async ensure() {
      if (signal?.aborted) throw new LeaseLost('the attempt was cancelled');
      if (deadline - performance.now() < MAX_SUBMISSION_MS)
        throw new LeaseLost('too little of the lease is left for a submission');
    },
  };
}

export class SubmissionLease implements SubmissionFence {
  #deadline: number;
  #lost: string | undefined;
  #renewing: Promise<void> | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort = () =>
    this.#lose(`the attempt was cancelled (${String(this.signal?.reason)})`);

  private constructor(
    readonly sql: Sql,
    readonly key: string,
    readonly token: number,
    deadline: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.#deadline = deadline;
    this.#timer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    if (signal?.aborted) this.#onAbort();
  }

  /**
   * Waits until this attempt holds `key`: at most one lease length while an earlier holder's
   * lease runs out. Throws LeaseLost when a newer attempt has already held it, or on `signal`.
   */
  static async acquire(sql: Sql, key: string, signal?: AbortSignal): Promise<SubmissionLease> {
    const free = await SubmissionLease.acquireIfFree(sql, key, signal);
    if (free) return free;
    const token = await newLeaseToken(sql);
    for (let poll = FIRST_CLAIM_POLL_MS; ; poll = Math.min(CLAIM_POLL_MS, poll * 2)) {
      if (signal?.aborted) throw new LeaseLost('the attempt was cancelled');
      const askedAt = performance.now();
      const claim = await claimLease(sql, key, token, SUBMISSION_LEASE_MS);
      if (claim.held)
        return new SubmissionLease(sql, key, token, askedAt + SUBMISSION_LEASE_MS, signal);
      if ('superseded' in claim) throw new LeaseLost('a newer attempt took the work over');
      // Never less than the first poll: a lease that has just run out (waitMs 0) is not spun on.
      await sleep(Math.min(poll, Math.max(FIRST_CLAIM_POLL_MS, claim.waitMs)), undefined, {
        signal,
      }).catch(() => {});
    }
  }

  /** The lease when nobody holds it now; undefined at once when somebody does. */
  static async acquireIfFree(
    sql: Sql,
    key: string,
    signal?: AbortSignal,
  ): Promise<SubmissionLease | undefined> {
    if (signal?.aborted) throw new LeaseLost('the attempt was cancelled');
    const askedAt = performance.now();
    const free = await claimFreeLease(sql, key, SUBMISSION_LEASE_MS);
    return free === null
      ? undefined
      : new SubmissionLease(sql, key, free, askedAt + SUBMISSION_LEASE_MS, signal);
  }

  /**
   * Takes the lease of work created in `tx` (its key new, so nobody can hold it yet); held once
   * `tx` commits. Renewed through `sql` from then on: a renewal before the commit finds no row
   * and loses the lease, so an attempt never submits on a lease that was not committed.
   */
  static async takeWithin(
    tx: TransactionSql,
    sql: Sql,
    key: string,
    signal?: AbortSignal,
  ): Promise<SubmissionLease | undefined> {
    const askedAt = performance.now();
    const token = await claimFreeLease(tx, key, SUBMISSION_LEASE_MS);
    return token === null
      ? undefined
      : new SubmissionLease(sql, key, token, askedAt + SUBMISSION_LEASE_MS, signal);
  }

  #lose(reason: string) {
    this.#lost ??= reason;
    clearInterval(this.#timer);
  }

  #remainingMs() {
    return this.#lost ? 0 : this.#deadline - performance.now();
  }

  /** Extends the lease; a refusal (a newer attempt waits) loses it, an outage lets it run out. */
  renew(): Promise<void> {
    if (this.#lost) return Promise.resolve();
    this.#renewing ??= (async () => {
      const askedAt = performance.now();
      try {
        if (await renewLease(this.sql, this.key, this.token, SUBMISSION_LEASE_MS))
          this.#deadline = askedAt + SUBMISSION_LEASE_MS;
        else this.#lose('a newer attempt is waiting for it, or it ran out');
      } catch {
        // Postgres unreachable: keep the lease we have; it runs out on its own.
      } finally {
        this.#renewing = undefined;
      }
    })();
    return this.#renewing;
  }

  async ensure(): Promise<void> {
    if (this.#remainingMs() < MAX_SUBMISSION_MS) await this.renew();
    if (this.#lost) throw new LeaseLost(this.#lost);
    if (this.#remainingMs() < MAX_SUBMISSION_MS)
      throw new LeaseLost('it could not be renewed in time');
  }

  /**
   * Stops renewing and ends the lease now, so a successor need not wait it out. Only once nothing
   * of this attempt is in flight any more.
   */
  async close(): Promise<void> {
    this.#lose('closed');
    this.signal?.removeEventListener('abort', this.#onAbort);
    await this.#renewing;
    await releaseLease(this.sql, this.key, this.token).catch(() => {});
  }
}
