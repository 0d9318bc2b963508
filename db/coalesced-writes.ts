import { isDatabaseUnavailable } from './unavailable.js';

export interface CoalescingOptions {
  /** Most items one write carries. */
  max: number;
}

/**
 * Turns a write of many items into a call of one: calls made while a write is under way wait for
 * it and go together in the next, so a burst costs a few statements (and commits, and updates of
 * whatever rows their triggers share) instead of one each, and a lone call goes at once. A call
 * settles when the write that carried it has committed. A write that fails for a reason other
 * than Postgres being away is tried again item by item, so one bad item fails only its own call.
 */
export function coalescedWrites<I, O>(
  write: (items: I[]) => Promise<O[]>,
  options: CoalescingOptions,
): (item: I) => Promise<O> {
  type Waiting = { item: I; resolve: (value: O) => void; reject: (error: unknown) => void };
  const queue: Waiting[] = [];
  let writing = false;

  const writeBatch = async (batch: Waiting[]) => {
    try {
      const results = await write(batch.map((waiting) => waiting.item));
      for (const [index, waiting] of batch.entries()) waiting.resolve(results[index] as O);
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      await Promise.all(batch.map((waiting) => writeBatch([waiting])));
    }
  };

  const drain = async () => {
    writing = true;
    while (queue.length > 0) await writeBatch(queue.splice(0, options.max));
    writing = false;
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!writing) void drain();
    });
}
