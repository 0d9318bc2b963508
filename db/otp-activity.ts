/**
 * What became of a workspace's OTP requests over the last days (the console's OTP activity): per
 * day, per OTP service and purpose, and the latest requests. Every query reads one workspace's
 * requests of a bounded window through otp_requests_workspace_created_idx (0040).
 *
 * A request's fate, from its columns (0003_otp.sql):
 * - sent with status: `pending` (not yet handed to a provider), `accepted`, `failed`;
 * - verified: `verified_at` is set;
 * - exhausted: not verified, and its recipient's failed verifications for its purpose reached the
 *   limit while its code could be used (counted over the failure window before it, as
 *   herald_verify_otp_outcome counts them), so a right code was refused too;
 * - expired unverified: accepted, not verified, not exhausted, and past `expires_at` (a code
 *   superseded by a newer one included: it was never used).
 */
import type { Sql } from './client.js';

export interface OtpActivityWindow {
  workspaceId: number;
  days: number;
  /** Only this OTP service's requests (its slug); all when null. */
  serviceSlug: string | null;
  /** Only this purpose's requests; all when null. */
  purpose: string | null;
  maxFailures: number;
  failureWindowMinutes: number;
}

export interface OtpOutcomeCounts {
  sent: number;
  accepted: number;
  pending: number;
  failed: number;
  verified: number;
  expired: number;
  exhausted: number;
}

export interface OtpActivityDay extends OtpOutcomeCounts {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
}

export interface OtpActivityGroup extends OtpOutcomeCounts {
  serviceSlug: string | null;
  /** The service's name now; null for a send without a service or a deleted service. */
  serviceName: string | null;
  purpose: string;
}

export interface OtpActivityRequest {
  id: string;
  createdAt: Date;
  recipient: string;
  purpose: string;
  serviceName: string | null;
  status: 'pending' | 'accepted' | 'failed';
  verifiedAt: Date | null;
  expiresAt: Date;
  exhausted: boolean;
}

/** The window's requests with their fate's flags, as `r`. */
function classified(sql: Sql, window: OtpActivityWindow) {
  return sql`
    select r.id, r.created_at, r.recipient, r.purpose, r.service_slug, r.status, r.verified_at,
      r.expires_at,
      r.verified_at is null and (
        select count(*) from otp_verification_failures f
        where f.workspace_id = r.workspace_id and f.recipient = r.recipient
          and f.purpose = r.purpose and f.user_id is not distinct from r.user_id
          and f.failed_at > r.created_at - make_interval(mins => ${window.failureWindowMinutes})
          and f.failed_at < r.expires_at
      ) >= ${window.maxFailures} as exhausted
    from otp_requests r
    where r.workspace_id = ${window.workspaceId}
      and r.created_at > now() - make_interval(days => ${window.days})
      ${window.serviceSlug === null ? sql`` : sql`and r.service_slug = ${window.serviceSlug}`}
      ${window.purpose === null ? sql`` : sql`and r.purpose = ${window.purpose}`}`;
}

const COUNTS = (sql: Sql) => sql`
  count(*)::int as sent,
  (count(*) filter (where r.status = 'accepted'))::int as accepted,
  (count(*) filter (where r.status = 'pending'))::int as pending,
  (count(*) filter (where r.status = 'failed'))::int as failed,
  (count(*) filter (where r.verified_at is not null))::int as verified,
  (count(*) filter (where r.status = 'accepted' and r.verified_at is null and not r.exhausted
    and r.expires_at <= now()))::int as expired,
  (count(*) filter (where r.exhausted))::int as exhausted`;

/** Per UTC day with any request, oldest first. */
export async function otpActivityByDay(
  sql: Sql,
  window: OtpActivityWindow,
): Promise<OtpActivityDay[]> {
  return sql<OtpActivityDay[]>`
    select to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, ${COUNTS(sql)}
    from (${classified(sql, window)}) r
    group by 1 order by 1`;
}

/** Per OTP service and purpose, the most sent first. */
export async function otpActivityByServiceAndPurpose(
  sql: Sql,
  window: OtpActivityWindow,
): Promise<OtpActivityGroup[]> {
  return sql<OtpActivityGroup[]>`
    select r.service_slug::text as service_slug, s.name as service_name, r.purpose, ${COUNTS(sql)}
    from (${classified(sql, window)}) r
    left join otp_services s on s.workspace_id = ${window.workspaceId} and s.slug = r.service_slug
    group by r.service_slug, s.name, r.purpose
    order by sent desc, r.purpose, s.name nulls last`;
}

/** The latest `limit` requests of the window, newest first. */
export async function latestOtpRequests(
  sql: Sql,
  window: OtpActivityWindow,
  limit: number,
): Promise<OtpActivityRequest[]> {
  return sql<OtpActivityRequest[]>`
    select r.id, r.created_at, r.recipient, r.purpose, s.name as service_name, r.status,
      r.verified_at, r.expires_at, r.exhausted
    from (${classified(sql, window)} order by r.created_at desc, r.id limit ${limit}) r
    left join otp_services s on s.workspace_id = ${window.workspaceId} and s.slug = r.service_slug
    order by r.created_at desc, r.id`;
}

/** The purposes the workspace sent codes for in the window: the filter's choices. */
export async function otpPurposesSent(sql: Sql, workspaceId: number, days: number) {
  const rows = await sql<{ purpose: string }[]>`
    select distinct purpose from otp_requests
    where workspace_id = ${workspaceId} and created_at > now() - make_interval(days => ${days})
    order by purpose limit 200`;
  return rows.map((row) => row.purpose);
}
