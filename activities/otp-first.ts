/**
 * A wait of one campaign batch for codes in flight. Short, so that a steady stream of codes slows
 * campaigns and never stops them; long enough to cover a code's submission (a claim, a provider
 * call, a write).
 */
export const MAX_BATCH_WAIT_MS = 250;

/**
 * OTP codes before campaign batches, within one worker: while a code is being submitted, campaign
 * chunks wait before starting their next batch. A code otherwise shares this process, the
 * provider and Postgres with up to 200 campaign submissions in flight, and a person is waiting
 * for it (the chaos drill otp-under-load measures this). Codes in other workers are not seen.
 */
export class OtpFirst {
  #codesInFlight = 0;
  #waiting = new Set<() => void>();

  /** Runs one code's submission; campaign batches hold back until it ends. */
  async submittingCode<T>(submit: () => Promise<T>): Promise<T> {
    this.#codesInFlight++;
    try {
      return await submit();
    } finally {
      this.#codesInFlight--;
      if (this.#codesInFlight === 0) for (const resume of this.#waiting) resume();
    }
  }

  /** Resolves at once when no code is in flight, else when none is or after `maxMs`. */
  beforeCampaignBatch(maxMs = MAX_BATCH_WAIT_MS): Promise<void> {
    if (this.#codesInFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const resume = () => {
        clearTimeout(timer);
        this.#waiting.delete(resume);
        resolve();
      };
      const timer = setTimeout(resume, maxMs);
      this.#waiting.add(resume);
    });
  }
}
