import type { Sql } from '../db/client.js';
import { OWN_PROVIDER_SLUG } from '../providers/registry.js';
import type { SmsProvider } from '../providers/types.js';

/**
 * Paces submissions to each provider's `messagesPerSecond`, across every worker and campaign.
 * Slots are reserved in Postgres (`provider_send_slots`): one update reserves the slots of all
 * the submissions waiting in this process at that moment, and each then sleeps until its own.
 * A reserved slot that goes unused (a crash, a failure) is simply lost: the limit is never
 * exceeded, at worst under-used.
 */
export interface Pacer {
  /** Resolves when `provider` may take one more submission. */
  wait(provider: SmsProvider): Promise<void>;
}

/** The `own` provider is the operator's, shared by every workspace; the others are per workspace. */
export function throughputKey(workspaceId: number, slug: string): string {
  return slug === OWN_PROVIDER_SLUG ? OWN_PROVIDER_SLUG : `${workspaceId}/${slug}`;
}

/**
 * Reserves `count` consecutive slots of `1 / perSecond` s; returns how many milliseconds from
 * now the first one starts (negative or zero: now). Postgres's clock is the shared one.
 */
export async function reserveSlots(
  sql: Sql,
  key: string,
  perSecond: number,
  count: number,
): Promise<number> {
  const span = count / perSecond;
  const [row] = await sql<{ delayMs: number }[]>`
    insert into provider_send_slots as s (provider_key, next_slot_at)
    values (${key}, clock_timestamp() + make_interval(secs => ${span}))
    on conflict (provider_key) do update
      set next_slot_at = greatest(s.next_slot_at, clock_timestamp()) + make_interval(secs => ${span})
    returning extract(epoch from (next_slot_at - make_interval(secs => ${span}) - clock_timestamp())) * 1000
      as delay_ms`;
  return Number(row?.delayMs ?? 0);
}

/** Forgets providers whose last reserved slot is over a day old: their next reservation starts anew. */
export async function deleteIdleSendSlots(sql: Sql): Promise<number> {
  const result = await sql`
    delete from provider_send_slots where next_slot_at < now() - interval '1 day'`;
  return result.count;
}

/** A pacer for one workspace's submissions; providers without a limit pass straight through. */
export function createPacer(sql: Sql, workspaceId: number): Pacer {
  type Waiter = { resolve: () => void; reject: (error: unknown) => void };
  const waiting = new Map<string, { perSecond: number; waiters: Waiter[] }>();

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
    wait(provider) {
      const perSecond = provider.messagesPerSecond;
      if (perSecond === null) return Promise.resolve();
      const key = throughputKey(workspaceId, provider.slug);
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
