/** Quiet hours for marketing (0037): the workspace's window and the messages waiting for it. */
import type { QuietHours } from '../domain/quiet-hours.js';
import type { Sql, TransactionSql } from './client.js';

/** The workspace's window, or null: no quiet hours. */
export async function findQuietHours(
  sql: Sql | TransactionSql,
  workspaceId: number,
): Promise<QuietHours | null> {
  const [row] = await sql<{ quietHoursStart: number | null; quietHoursEnd: number | null }[]>`
    select quiet_hours_start, quiet_hours_end from workspaces where id = ${workspaceId}`;
  return row?.quietHoursStart != null && row.quietHoursEnd != null
    ? { start: row.quietHoursStart, end: row.quietHoursEnd }
    : null;
}

/** Sets (or with null, removes) the window of the workspace with this slug; its id, if found. */
export async function setQuietHours(
  sql: Sql | TransactionSql,
  slug: string,
  window: QuietHours | null,
): Promise<number | undefined> {
  const [row] = await sql<{ id: number }[]>`
    update workspaces
    set quiet_hours_start = ${window?.start ?? null}, quiet_hours_end = ${window?.end ?? null}
    where slug = ${slug}
    returning id`;
  return row?.id;
}

/**
 * Marks which of a chunk's queued messages wait, and until when; null for the ones going now.
 * A settled (or canceled) message is left as it is.
 */
export async function holdMessages(
  sql: Sql,
  campaignId: number,
  holds: { seq: number; until: Date | null }[],
): Promise<void> {
  if (holds.length === 0) return;
  await sql`
    update campaign_messages m set held_until = h.until
    from unnest(${holds.map((hold) => hold.seq)}::int[],
                ${holds.map((hold) => hold.until?.toISOString() ?? null)}::timestamptz[])
      as h(seq, until)
    where m.campaign_id = ${campaignId} and m.seq = h.seq and m.status = 'queued'
      and m.held_until is distinct from h.until`;
}

/** When the first of a chunk's waiting messages may go, or null when none waits. */
export async function earliestHold(
  sql: Sql,
  campaignId: number,
  fromSeq: number,
  toSeq: number,
): Promise<Date | null> {
  const [row] = await sql<{ until: Date | null }[]>`
    select min(held_until) as until from campaign_messages
    where campaign_id = ${campaignId} and seq between ${fromSeq} and ${toSeq}
      and status = 'queued' and held_until is not null`;
  return row?.until ?? null;
}

/** How many of a campaign's messages wait for their recipients' quiet hours to end. */
export async function countHeldMessages(sql: Sql, campaignId: number): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from campaign_messages
    where campaign_id = ${campaignId} and status = 'queued' and held_until is not null`;
  return row?.count ?? 0;
}
