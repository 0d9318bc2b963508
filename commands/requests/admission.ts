import { HeraldError } from '../../domain/errors.js';

/**
 * Admission for sends (docs/api.md "Admission"). A send that saves its campaign must then have its
 * workflow start confirmed before its answer is due (`answerBy`), else it answers `paused` although
 * nothing failed. Under load the time goes before the start: signing in and reading the body,
 * waiting for a connection, and the save itself (1,000 rows per send, every send at once on a
 * shared pool), so that saves commit too late to be dispatched. So sends are let in a few at a
 * time (the phase: from the request's first hook to its answer), and only while the phase, as
 * long as the recent ones took, still ends before `answerBy`; a send that cannot get in by then
 * is refused before anything is read or saved, with 503 and Retry-After.
 */

/**
 * Sends in their phase at once. Each holds at most one of the api's 10 pooled connections at a
 * time (db/client.ts DEFAULT_POOL_SIZE), which leaves two to the api's other routes. More at once
 * only queue for connections and share Postgres's cores: under load each 1,000-row save then
 * takes that many times longer, and commits too late to be dispatched.
 */
export const SEND_SLOTS = 8;
/** The least a phase is assumed to take, before any was measured. */
const MIN_PHASE_MS = 500;
/** The least its tail (commit and start) is assumed to take. */
const MIN_TAIL_MS = 300;
/** Room over the slowest recent tail: a start under load varies from one send to the next. */
const TAIL_SAFETY = 1.5;
/** How long a measured duration counts: the load it tells of may be over since. */
const MEMORY_MS = 10_000;
/** What a refused send is told to wait: a phase lasts well under a second when not overloaded. */
export const ADMISSION_RETRY_AFTER_S = 1;

export const AT_CAPACITY_MESSAGE =
  'Herald is at capacity and did not save this send: retry after Retry-After seconds.';

export function atCapacity(): HeraldError {
  return new HeraldError('service_unavailable', {
    message: AT_CAPACITY_MESSAGE,
    headers: { 'retry-after': String(ADMISSION_RETRY_AFTER_S) },
  });
}

interface Waiter {
  answerBy: number;
  admit: () => void;
  refuse: () => void;
}

/** The `quantile` of the durations measured in the last MEMORY_MS, at least `least`. */
class RecentDurations {
  private readonly seen: { at: number; ms: number }[] = [];

  constructor(
    private readonly quantile: number,
    private readonly least: number,
  ) {}

  add(ms: number) {
    this.seen.push({ at: Date.now(), ms });
  }

  value(now = Date.now()): number {
    while ((this.seen[0]?.at ?? now) < now - MEMORY_MS) this.seen.shift();
    const sorted = this.seen.map((entry) => entry.ms).sort((a, b) => a - b);
    const at = Math.ceil(this.quantile * sorted.length) - 1;
    return Math.max(this.least, sorted[Math.max(0, at)] ?? 0);
  }
}

/**
 * The rule, in two checks. A send enters its phase only while the phase, as slow as the recent
 * ones' 90th percentile, ends before `answerBy`, and only `slots` at once (a waiter is refused
 * once that no longer holds; with none running, one is let in to measure the load now). And its save commits only while the commit and the start, as slow as the
 * slowest recent ones, end before `answerBy`: else it rolls back and is refused, nothing saved.
 * The second check is what keeps a saved send from answering `paused` when a phase ran slower
 * than the first predicted.
 */
export class Admission {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Entry judges by the phases' 90th percentile: work let in is work that usually ends in time. */
  private readonly phases = new RecentDurations(0.9, MIN_PHASE_MS);
  /** The commit by the slowest tail: what commits must be confirmed in time. */
  private readonly tails = new RecentDurations(1, MIN_TAIL_MS);

  constructor(private readonly slots: number) {}

  /** Whether a phase entered now still ends before `answerBy`. */
  private inTime(answerBy: number): boolean {
    const now = Date.now();
    return now + this.phases.value(now) <= answerBy;
  }

  /**
   * Takes a slot once one is free and there is still time for the phase; throws `atCapacity()`
   * when there is not. The returned function gives the slot back when the phase is over.
   */
  async enter(answerBy: number): Promise<() => void> {
    // With none running, one is let try whatever the past said: it measures the load now.
    if (this.running > 0 && !this.inTime(answerBy)) throw atCapacity();
    if (this.running < this.slots) this.running += 1;
    else await this.queue(answerBy);
    const entered = Date.now();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.phases.add(Date.now() - entered);
      this.handOver();
    };
  }

  /**
   * Called just before a save commits: throws `atCapacity()` (the caller rolls back) unless the
   * commit and the start can still be confirmed before `answerBy`. The returned function is
   * called once the start is confirmed, to measure that tail.
   */
  committing(answerBy: number): () => void {
    const now = Date.now();
    if (now + TAIL_SAFETY * this.tails.value(now) > answerBy) throw atCapacity();
    return () => this.tails.add(Date.now() - now);
  }

  /** Waits for a slot; refused once the phase could no longer end before `answerBy`. */
  private queue(answerBy: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        answerBy,
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
        refuse: () => {
          clearTimeout(timer);
          reject(atCapacity());
        },
      };
      const latest = answerBy - this.phases.value();
      const timer = setTimeout(
        () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          waiter.refuse();
        },
        Math.min(Math.max(0, latest - Date.now()), 2 ** 31 - 1),
      );
      this.waiting.push(waiter);
    });
  }

  /** A freed slot goes to the first waiter that still has time, judged by the phases now. */
  private handOver() {
    for (let waiter = this.waiting.shift(); waiter; waiter = this.waiting.shift()) {
      if (this.running === 1 || this.inTime(waiter.answerBy)) return waiter.admit();
      waiter.refuse();
    }
    this.running -= 1;
  }
}

/** The api process's sends: POST /api/v1/messages (api/routes/messages.ts, commands/messaging/send-campaign.ts). */
export const sendAdmission = new Admission(SEND_SLOTS);
