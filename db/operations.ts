import type { Sql } from './client.js';

/*
 * What the metrics read from Postgres when scraped (telemetry/metrics.ts): a few index reads,
 * bounded however large the tables grow.
 */

/** Campaign messages queued and not yet submitted, and the age of the oldest campaign holding one. */
export async function campaignBacklog(
  sql: Sql,
): Promise<{ messages: number; oldestSeconds: number }> {
  const [row] = await sql<{ messages: number; oldestSeconds: number }[]>`
    select coalesce(sum(queued.messages), 0)::int as messages,
      coalesce(extract(epoch from now() - min(c.created_at)), 0)::float8 as oldest_seconds
    from campaigns c
    cross join lateral (
      select count(*) as messages from campaign_messages m
      where m.campaign_id = c.id and m.status = 'queued'
    ) queued
    where c.status = 'queued' and queued.messages > 0`;
  return row ?? { messages: 0, oldestSeconds: 0 };
}

/** Herald's connections to this database as Postgres counts them, by state (active, idle…). */
export async function heraldConnectionsByState(
  sql: Sql,
): Promise<{ state: string; connections: number }[]> {
  return sql<{ state: string; connections: number }[]>`
    select coalesce(state, 'unknown') as state, count(*)::int as connections
    from pg_stat_activity
    where application_name = 'herald' and datname = current_database()
    group by 1`;
}
