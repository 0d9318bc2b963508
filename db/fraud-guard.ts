/** The fraud guard's rows: settings, recent sends, blocked ranges, daily use, refusals, buckets. */
import type { GuardOverrides, GuardRule } from '../domain/fraud-guard.js';
import { relaxedCommit, type Sql, type TransactionSql } from './client.js';

type AnySql = Sql | TransactionSql;

/** The workspace's overrides and, when a service (by slug) is named, the service's, in one read. */
export async function findGuardOverrides(
  sql: AnySql,
  workspaceId: number,
  serviceSlug: string | null = null,
): Promise<{ workspace: GuardOverrides; service: GuardOverrides }> {
  const rows = await sql<{ forService: boolean; settings: GuardOverrides }[]>`
    select g.otp_service_id is not null as for_service, g.settings from guard_settings g
    where g.workspace_id = ${workspaceId}
      and (g.otp_service_id is null or g.otp_service_id = (
        select s.id from otp_services s
        where s.workspace_id = ${workspaceId} and s.slug = ${serviceSlug}::uuid))`;
  const find = (forService: boolean) =>
    rows.find((row) => row.forService === forService)?.settings ?? {};
  return { workspace: find(false), service: find(true) };
}

/** Replaces the workspace's (or its OTP service's, by slug) overrides. */
export async function saveGuardOverrides(
  sql: AnySql,
  workspaceId: number,
  serviceSlug: string | null,
  settings: GuardOverrides,
): Promise<void> {
  const json = sql.json(settings as Parameters<typeof sql.json>[0]);
  if (serviceSlug === null)
    await sql`
      insert into guard_settings (workspace_id, settings) values (${workspaceId}, ${json})
      on conflict (workspace_id) where otp_service_id is null
      do update set settings = excluded.settings, updated_at = now()`;
  else
    await sql`
      insert into guard_settings (workspace_id, otp_service_id, settings)
      select ${workspaceId}, id, ${json} from otp_services
      where workspace_id = ${workspaceId} and slug = ${serviceSlug}::uuid
      on conflict (otp_service_id) do update set settings = excluded.settings, updated_at = now()`;
}

/** Serializes changes to a workspace's settings (read, change, write) until the transaction ends. */
export async function lockGuardSettings(tx: TransactionSql, workspaceId: number) {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`guard-settings:${workspaceId}`}, 2501))`;
}

/**
 * Serializes the OTP sends of one workspace and number range until the transaction ends, so the
 * counts below and the send they admit are one step: exact under any concurrency or replicas.
 */
export async function lockOtpRange(tx: TransactionSql, workspaceId: number, range: string) {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`otp-range:${workspaceId}:${range}`}, 2501))`;
}

export interface OtpSendHistory {
  /** Postgres's clock, epoch seconds. */
  now: number;
  /** The recipient's counted sends within the longest window, epoch seconds, newest first. */
  recipientSends: number[];
  /** The range's counted sends within the breaker's window, since its last block ended. */
  rangeSends: number;
  rangeVerified: number;
  /** Until when a block in force holds the range. */
  blockedUntil: Date | null;
}

/**
 * What the guard counts for an OTP send, in one read: a send counts when it was accepted or is
 * pending (one that failed cost nothing); a replay is the same request, so it never counts twice.
 */
export async function readOtpSendHistory(
  tx: TransactionSql,
  input: {
    workspaceId: number;
    recipient: string;
    range: string;
    recipientSeconds: number;
    recipientLimit: number;
    rangeSeconds: number;
  },
): Promise<OtpSendHistory> {
  const [row] = await tx<OtpSendHistory[]>`
    with block as (
      select max(blocked_until) filter (where lifted_at is null and blocked_until > now())
          as blocked_until,
        max(least(blocked_until, coalesce(lifted_at, blocked_until))) as ended_at
      from guard_blocked_ranges
      where workspace_id = ${input.workspaceId} and range = ${input.range}
    )
    select extract(epoch from now())::float8 as now, block.blocked_until,
      array(
        select extract(epoch from created_at)::float8 from otp_requests
        where workspace_id = ${input.workspaceId} and recipient = ${input.recipient}
          and created_at > now() - make_interval(secs => ${input.recipientSeconds})
          and status <> 'failed'
        order by created_at desc limit ${input.recipientLimit}) as recipient_sends,
      coalesce(range.sends, 0)::int as range_sends, coalesce(range.verified, 0)::int as range_verified
    from block, lateral (
      select count(*) as sends, count(verified_at) as verified from otp_requests
      where workspace_id = ${input.workspaceId} and left(recipient, -4) = ${input.range}
        and created_at > greatest(now() - make_interval(secs => ${input.rangeSeconds}),
          coalesce(block.ended_at, '-infinity'))
        and status <> 'failed'
    ) range`;
  return row as OtpSendHistory;
}

export interface RangeBlock {
  id: number;
  range: string;
  blockedAt: Date;
  blockedUntil: Date;
  sends: number;
  verified: number;
}

/**
 * Records a trip once (the range lock serializes them): the block, its audit entry and the
 * `otp.range_blocked` event for the workspace's subscribed endpoints.
 */
export async function recordRangeBlock(
  tx: TransactionSql,
  input: {
    workspaceId: number;
    range: string;
    coolDownSeconds: number;
    sends: number;
    verified: number;
    windowSeconds: number;
  },
): Promise<RangeBlock> {
  const [block] = await tx<RangeBlock[]>`
    insert into guard_blocked_ranges (workspace_id, range, blocked_until, sends, verified)
    values (${input.workspaceId}, ${input.range},
      now() + make_interval(secs => ${input.coolDownSeconds}), ${input.sends}, ${input.verified})
    returning id, range, blocked_at, blocked_until, sends, verified`;
  const found = block as RangeBlock;
  const details = {
    range: input.range,
    sends: input.sends,
    verified: input.verified,
    window_seconds: input.windowSeconds,
    blocked_until: found.blockedUntil.toISOString(),
  };
  await tx`
    insert into audit_log (workspace_id, actor, source, action, target, details)
    values (${input.workspaceId}, 'fraud guard', 'guard', 'otp.range_blocked',
      ${`range ${input.range}`}, ${tx.json(details)})`;
  await insertGuardEvent(tx, input.workspaceId, 'otp.range_blocked', {
    ...details,
    blocked_at: found.blockedAt.toISOString(),
  });
  return found;
}

/** A guard event to the workspace's endpoints subscribed to it (the webhooks outbox). */
async function insertGuardEvent(
  tx: TransactionSql,
  workspaceId: number,
  type: 'otp.range_blocked' | 'spend.cap_near',
  data: Record<string, string | number>,
) {
  const inserted = await tx`
    insert into webhook_events (workspace_id, type, data, endpoint_ids)
    select ${workspaceId}, ${type}, ${tx.json(data)}, endpoints
    from (select webhook_subscribers(${workspaceId}, ${type}) as endpoints) s
    where endpoints is not null`;
  if (inserted.count > 0) await tx`select pg_notify('herald_webhook_events', '')`;
}

/** The blocks in force, newest first. */
export function listBlockedRanges(sql: AnySql, workspaceId: number) {
  return sql<RangeBlock[]>`
    select id, range, blocked_at, blocked_until, sends, verified from guard_blocked_ranges
    where workspace_id = ${workspaceId} and lifted_at is null and blocked_until > now()
    order by blocked_at desc`;
}

/** Lifts the range's blocks in force; how many there were. Its sends count afresh from now. */
export async function liftRangeBlocks(
  sql: AnySql,
  workspaceId: number,
  range: string,
  liftedBy: string,
): Promise<number> {
  const lifted = await sql`
    update guard_blocked_ranges set lifted_at = now(), lifted_by = ${liftedBy}
    where workspace_id = ${workspaceId} and range = ${range} and lifted_at is null
      and blocked_until > now()`;
  return lifted.count;
}

/**
 * Adds a send's segments to the UTC day's use if they fit under the cap; false when they do not.
 * The row lock makes it exact across replicas; the `spend.cap_near` event goes with the send that
 * crosses `nearPercent`.
 */
export async function reserveDailySegments(
  tx: TransactionSql,
  input: { workspaceId: number; segments: number; cap: number; nearPercent: number },
): Promise<boolean> {
  if (input.segments > input.cap) return false;
  const [row] = await tx<{ segments: number; day: string }[]>`
    insert into guard_daily_usage as u (workspace_id, day, segments)
    values (${input.workspaceId}, (now() at time zone 'UTC')::date, ${input.segments})
    on conflict (workspace_id, day) do update set segments = u.segments + excluded.segments
    where u.segments + excluded.segments <= ${input.cap}
    returning segments::int, day::text`;
  if (!row) return false;
  const near = (input.cap * input.nearPercent) / 100;
  if (row.segments >= near && row.segments - input.segments < near)
    await insertGuardEvent(tx, input.workspaceId, 'spend.cap_near', {
      day: row.day,
      cap_segments: input.cap,
      used_segments: row.segments,
      threshold_percent: input.nearPercent,
    });
  return true;
}

/**
 * Starts counting the day's use when a cap is set, from what was accepted today: OTP requests that
 * did not fail and campaigns' messages (a personalised message's own segments, 0035). A count
 * already running is kept.
 */
export async function startDailyUsage(sql: AnySql, workspaceId: number): Promise<void> {
  await sql`
    insert into guard_daily_usage (workspace_id, day, segments)
    select ${workspaceId}, today,
      (select coalesce(sum(segments), 0) from otp_requests
        where workspace_id = ${workspaceId} and status <> 'failed'
          and created_at >= today::timestamp at time zone 'UTC')
      + (select coalesce(sum(coalesce(m.segments, c.segments, 1)), 0)
        from campaigns c join campaign_messages m on m.campaign_id = c.id
        where c.workspace_id = ${workspaceId} and c.created_at >= today::timestamp at time zone 'UTC')
    from (select (now() at time zone 'UTC')::date as today) d
    on conflict do nothing`;
}

/** Stops counting once the workspace has no cap: a cap set later counts afresh. */
export async function stopDailyUsage(sql: AnySql, workspaceId: number): Promise<void> {
  await sql`delete from guard_daily_usage where workspace_id = ${workspaceId}`;
}

/** The day's use so far (0 when nothing is counted). */
export async function findDailyUsage(sql: AnySql, workspaceId: number): Promise<number> {
  const [row] = await sql<{ segments: number }[]>`
    select segments::int from guard_daily_usage
    where workspace_id = ${workspaceId} and day = (now() at time zone 'UTC')::date`;
  return row?.segments ?? 0;
}

export type { GuardRule } from '../domain/fraud-guard.js';

export async function countGuardRefusal(
  sql: AnySql,
  workspaceId: number,
  rule: GuardRule,
  refusals = 1,
): Promise<void> {
  await sql`
    insert into guard_refusals as r (workspace_id, day, rule, refusals)
    values (${workspaceId}, (now() at time zone 'UTC')::date, ${rule}, ${refusals})
    on conflict (workspace_id, day, rule) do update set refusals = r.refusals + excluded.refusals`;
}

/** Refusals per UTC day and rule over the last `days` days, oldest first. */
export function listGuardRefusals(sql: AnySql, workspaceId: number, days: number) {
  return sql<{ day: string; rule: GuardRule; refusals: number }[]>`
    select day::text, rule, refusals::int from guard_refusals
    where workspace_id = ${workspaceId}
      and day > (now() at time zone 'UTC')::date - ${days}::int
    order by day, rule`;
}

export interface BucketTake {
  key: string;
  allowed: boolean;
  tokens: number;
  capacity: number;
  rate: number;
}

/**
 * Takes one token from each bucket, or none when any is empty, in one statement: the rows are
 * locked in key order (no deadlock between replicas) and refilled by Postgres's clock (replicas'
 * clocks do not matter). A bucket's first request creates it full, then takes again. A relaxed
 * commit: takes lost in a crash of Postgres are granted once more.
 */
export async function takeRateTokens(
  sql: Sql,
  buckets: readonly { key: string; capacity: number; perSecond: number }[],
): Promise<BucketTake[]> {
  const keys = buckets.map((bucket) => bucket.key);
  const capacities = buckets.map((bucket) => bucket.capacity);
  const take = () => sql<BucketTake[]>`
    with ${relaxedCommit(sql)}, wanted as (
      select * from unnest(${keys}::text[], ${capacities}::float8[],
        ${buckets.map((bucket) => bucket.perSecond)}::float8[]) as w(key, capacity, rate)
    ), locked as (
      select b.key, w.capacity, w.rate,
        least(w.capacity, b.tokens
          + greatest(0, extract(epoch from statement_timestamp() - b.refreshed_at)) * w.rate)
          as refilled
      from rate_buckets b join wanted w on w.key = b.key
      order by b.key
      for update of b
    ), verdict as (
      select bool_and(refilled >= 1) and count(*) = ${keys.length} as ok from locked
    )
    update rate_buckets b
    set tokens = l.refilled - case when v.ok then 1 else 0 end,
      refreshed_at = greatest(b.refreshed_at, statement_timestamp())
    from locked l, verdict v, relaxed
    where b.key = l.key
    returning b.key, v.ok as allowed, b.tokens, l.capacity, l.rate`;
  const takes = await take();
  if (takes.length === keys.length) return takes;
  await sql`
    insert into rate_buckets (key, tokens, refreshed_at)
    select key, capacity, statement_timestamp() from unnest(${keys}::text[], ${capacities}::float8[]) as w(key, capacity)
    on conflict do nothing`;
  return take();
}
