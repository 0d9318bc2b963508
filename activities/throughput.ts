import type { Sql } from '../db/client.js';
import { reserveSlots } from '../db/send-slots.js';
import { OWN_PROVIDER_SLUG } from '../providers/registry.js';
import type { SmsProvider } from '../providers/types.js';

/**
 * Paces submissions to each provider's `messagesPerSecond`, across every worker and campaign.
 * Slots are reserved in Postgres (db/send-slots.ts): one update reserves the slots of all
 * the submissions waiting in this process at that moment, and each then sleeps until its own.
 * A reserved slot that goes unused (a crash, a failure) is simply lost: the limit is never
 * exceeded, at worst under-used.
 */
export interface Pacer {
  /** Resolves when `provider` may take one more submission. */
  wait(provider: SmsProvider): Promise<void>;
  /**
   * Reserves `count` slots of `provider` now, for its next `count` waits: a first try's, while
   * its campaign's save commits, so that no round trip is left on the message's way. A slot
   * starts a little later than reserved (by about that commit), as every slot may.
   */
  reserveAhead(provider: SmsProvider, count: number): void;
}

/** The `own` provider is the operator's, shared by every workspace; the others are per workspace. */
export function throughputKey(workspaceId: number, slug: string): string {
  return slug === OWN_PROVIDER_SLUG ? OWN_PROVIDER_SLUG : `${workspaceId}/${slug}`;
}

/** A pacer for one workspace's submissions; providers without a limit pass straight through. */
export function createPacer(sql: Sql, workspaceId: number): Pacer {
  type Waiter = { resolve: () => void; reject: (error: unknown) => void };
  const waiting = new Map<string, { perSecond: number; waiters: Waiter[] }>();
  /** Slots reserved ahead, per key: when the first starts (performance.now()), and how many are left. */
  const ahead = new Map<string, { firstAt: Promise<number>; next: number; count: number }>();

  const startAt = (at: number) =>
    new Promise<void>((resolve) => {
      const delay = at - performance.now();
      if (delay > 0) setTimeout(resolve, delay);
      else resolve();
    });

  async function reserve(key: string) {
    const group = waiting.get(key);
    waiting.delete(key);
    if (!group) return;
    const { perSecond, waiters } = group;
    let first: number;
    try {
      first = await reserveSlots(sql, key, perSecond, waiters.length);
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    waiters.forEach((waiter, index) => {
      const delay = first + (index * 1000) / perSecond;
      if (delay > 0) setTimeout(waiter.resolve, delay);
      else waiter.resolve();
    });
  }

  return {
    reserveAhead(provider, count) {
      const perSecond = provider.messagesPerSecond;
      if (perSecond === null || count < 1) return;
      const firstAt = reserveSlots(sql, throughputKey(workspaceId, provider.slug), perSecond, count)
        // From the answer's arrival, never from the question's: a slot is never started early.
        .then((delay) => performance.now() + delay);
      // A failure is the first wait's to report.
      firstAt.catch(() => {});
      ahead.set(throughputKey(workspaceId, provider.slug), { firstAt, next: 0, count });
    },
    wait(provider) {
      const perSecond = provider.messagesPerSecond;
      if (perSecond === null) return Promise.resolve();
      const key = throughputKey(workspaceId, provider.slug);
      const reserved = ahead.get(key);
      if (reserved && reserved.next < reserved.count) {
        const index = reserved.next++;
        return reserved.firstAt.then((firstAt) => startAt(firstAt + (index * 1000) / perSecond));
      }
      return new Promise<void>((resolve, reject) => {
        const group = waiting.get(key);
        if (group) {
          group.waiters.push({ resolve, reject });
          return;
        }
        waiting.set(key, { perSecond, waiters: [{ resolve, reject }] });
        // Everything that asks in this turn of the event loop shares one reservation.
        setImmediate(() => void reserve(key));
      });
    },
  };
}
