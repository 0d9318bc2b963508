import { relaxedCommit, type Sql } from './client.js';

/*
 * provider_send_slots: the next free submission slot of each provider, shared by every worker.
 * Postgres's clock is the shared one.
 */

/**
 * Reserves `count` consecutive slots of `1 / perSecond` s; returns how many milliseconds from
 * now the first one starts (negative or zero: now). A relaxed commit: a reservation lost in a
 * crash of Postgres lets at most one more moment's slots go early.
 */
export async function reserveSlots(
  sql: Sql,
  key: string,
  perSecond: number,
  count: number,
): Promise<number> {
  const span = count / perSecond;
  const [row] = await sql<{ delayMs: number }[]>`
    with ${relaxedCommit(sql)}
    insert into provider_send_slots as s (provider_key, next_slot_at)
    select ${key}, clock_timestamp() + make_interval(secs => ${span}) from relaxed
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
