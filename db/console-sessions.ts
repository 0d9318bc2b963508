import type { Permission, Role } from '../domain/access.js';
import type { Sql, TransactionSql } from './client.js';

/** What every console page needs about its visitor, read in one query per request. */
export interface ConsoleVisitor {
  sessionId: number;
  userId: number;
  email: string;
  workspaceId: number;
  workspaceSlug: string;
  workspaceName: string;
  secondFactorPending: boolean;
  /** Null when the user is no longer a member of the session's workspace. */
  role: Role | null;
  status: 'active' | 'suspended' | null;
  permissions: Permission[];
  requireSecondFactor: boolean;
  totpEnabled: boolean;
  lastSeenAt: Date;
  /** The workspace's number ranges the fraud guard blocks now, for every page's banner. */
  pausedRanges: PausedRanges;
}

export interface PausedRanges {
  /** How many ranges are blocked; `ranges` holds the newest few. */
  total: number;
  ranges: { range: string; until: Date }[];
}

/** The banner names this many ranges at most; the rest are counted. */
const PAUSED_RANGES_SHOWN = 3;

export async function insertConsoleSession(
  sql: Sql | TransactionSql,
  input: {
    tokenHash: Buffer;
    userId: number;
    workspaceId: number;
    secondFactorPending: boolean;
    lifetimeSeconds: number;
    address: string | null;
    userAgent: string | null;
  },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into console_sessions (token_hash, user_id, workspace_id, second_factor_pending,
                                  expires_at, address, user_agent)
    values (${input.tokenHash}, ${input.userId}, ${input.workspaceId}, ${input.secondFactorPending},
            now() + make_interval(secs => ${input.lifetimeSeconds}), ${input.address},
            ${input.userAgent})
    returning id`;
  return row as { id: number };
}

/**
 * The live session stored under `tokenHash` (not revoked, within both timeouts) with its user,
 * workspace and the user's current membership there, and the workspace's blocked ranges for the
 * banner (a subquery on guard_blocked_ranges_active_idx: no second round trip per page).
 */
export async function findConsoleVisitor(
  sql: Sql,
  tokenHash: Buffer,
  idleSeconds: number,
): Promise<ConsoleVisitor | undefined> {
  // json carries the block's end as text: made a Date below.
  type Row = Omit<ConsoleVisitor, 'pausedRanges'> & {
    pausedRanges: { total: number; ranges: { range: string; until: string }[] };
  };
  const [visitor] = await sql<Row[]>`
    select s.id as session_id, s.user_id, u.email, s.workspace_id, w.slug as workspace_slug,
           w.name as workspace_name, s.second_factor_pending, m.role, m.status,
           coalesce(m.permissions, '{}') as permissions,
           w.require_second_factor, u.totp_enabled_at is not null as totp_enabled, s.last_seen_at,
           (select json_build_object('total', coalesce(max(p.total), 0),
                     'ranges', coalesce(json_agg(json_build_object('range', p.range,
                       'until', p.blocked_until) order by p.blocked_at desc), '[]'))
            from (select b.range, b.blocked_at, b.blocked_until, count(*) over () as total
                  from guard_blocked_ranges b
                  where b.workspace_id = s.workspace_id and b.lifted_at is null
                    and b.blocked_until > now()
                  order by b.blocked_at desc limit ${PAUSED_RANGES_SHOWN}) p) as paused_ranges
    from console_sessions s
    join users u on u.id = s.user_id
    join workspaces w on w.id = s.workspace_id
    left join workspace_members m on m.workspace_id = s.workspace_id and m.user_id = s.user_id
    where s.token_hash = ${tokenHash} and s.revoked_at is null and s.expires_at > now()
      and s.last_seen_at > now() - make_interval(secs => ${idleSeconds})`;
  if (!visitor) return undefined;
  const { total, ranges } = visitor.pausedRanges;
  return {
    ...visitor,
    pausedRanges: {
      total,
      ranges: ranges.map((block) => ({ range: block.range, until: new Date(block.until) })),
    },
  };
}

/** Activity moves the idle deadline; recorded at most once a minute per session. */
export async function touchConsoleSession(sql: Sql, sessionId: number): Promise<void> {
  await sql`
    update console_sessions set last_seen_at = now()
    where id = ${sessionId} and last_seen_at < now() - interval '1 minute'`;
}

/** A signed-in browser of the user, as their profile lists it. */
export interface UserConsoleSession {
  id: number;
  createdAt: Date;
  lastSeenAt: Date;
  address: string | null;
  userAgent: string | null;
  workspaceName: string;
  secondFactorPending: boolean;
}

/** The user's live sessions (not revoked, within both timeouts), the most recently seen first. */
export async function listUserConsoleSessions(
  sql: Sql,
  userId: number,
  idleSeconds: number,
): Promise<UserConsoleSession[]> {
  return sql<UserConsoleSession[]>`
    select s.id, s.created_at, s.last_seen_at, host(s.address) as address, s.user_agent,
           w.name as workspace_name, s.second_factor_pending
    from console_sessions s join workspaces w on w.id = s.workspace_id
    where s.user_id = ${userId} and s.revoked_at is null and s.expires_at > now()
      and s.last_seen_at > now() - make_interval(secs => ${idleSeconds})
    order by s.last_seen_at desc, s.id desc`;
}

/** Ends one live session of the user's own; false when they have no such live session. */
export async function revokeOwnConsoleSession(
  sql: Sql | TransactionSql,
  userId: number,
  sessionId: number,
  idleSeconds: number,
): Promise<boolean> {
  const result = await sql`
    update console_sessions set revoked_at = now()
    where id = ${sessionId} and user_id = ${userId} and revoked_at is null and expires_at > now()
      and last_seen_at > now() - make_interval(secs => ${idleSeconds})`;
  return result.count === 1;
}

export async function revokeConsoleSession(
  sql: Sql | TransactionSql,
  sessionId: number,
): Promise<void> {
  await sql`update console_sessions set revoked_at = now() where id = ${sessionId} and revoked_at is null`;
}

/** Every session of the user but `exceptSessionId` (a password or factor change). */
export async function revokeUserConsoleSessions(
  sql: Sql | TransactionSql,
  userId: number,
  exceptSessionId: number | null,
): Promise<number> {
  const result = await sql`
    update console_sessions set revoked_at = now()
    where user_id = ${userId} and revoked_at is null and id is distinct from ${exceptSessionId}`;
  return result.count;
}

export async function setSessionWorkspace(
  sql: Sql | TransactionSql,
  sessionId: number,
  workspaceId: number,
): Promise<void> {
  await sql`update console_sessions set workspace_id = ${workspaceId} where id = ${sessionId}`;
}

export async function completeSecondFactor(
  sql: Sql | TransactionSql,
  sessionId: number,
): Promise<void> {
  await sql`update console_sessions set second_factor_pending = false where id = ${sessionId}`;
}

/** Sessions ended a day ago or more, up to `limit` rows; returns how many. */
export async function deleteEndedConsoleSessions(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from console_sessions where id in (
      select id from console_sessions
      where expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day'
      limit ${limit})`;
  return result.count;
}
