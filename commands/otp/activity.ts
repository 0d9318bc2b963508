/**
 * OTP activity for the console (issue 31 item 4): what became of the workspace's codes over the
 * last 30 days, per day and per OTP service and purpose, with the conversion rate (verified /
 * sent) and the latest requests, their numbers masked unless the viewer may read them.
 */
import {
  latestOtpRequests,
  type OtpActivityDay,
  type OtpActivityGroup,
  type OtpActivityRequest,
  type OtpActivityWindow,
  type OtpOutcomeCounts,
  otpActivityByDay,
  otpActivityByServiceAndPurpose,
  otpPurposesSent,
} from '../../db/otp-activity.js';
import { listOtpServices } from '../../db/otp-service-listing.js';
import { FAILED_VERIFICATION_WINDOW_MINUTES, MAX_FAILED_VERIFICATIONS } from '../../domain/otp.js';
import { numberShown } from '../../domain/phone.js';
import { UUID } from '../../domain/request-schema.js';
import type { CommandDeps } from '../deps.js';

type Deps = Pick<CommandDeps, 'sql'>;

export const ACTIVITY_DAYS = 30;
export const LATEST_REQUESTS = 100;

export type { OtpActivityDay, OtpActivityGroup, OtpOutcomeCounts };

export interface OtpRequestRow extends Omit<OtpActivityRequest, 'exhausted'> {
  /** What became of it, in words: verified, exhausted, expired, waiting, failed to send. */
  fate: 'verified' | 'exhausted' | 'expired' | 'open' | 'not sent yet' | 'failed to send';
}

export interface OtpActivity {
  days: number;
  filter: { service: string | null; purpose: string | null };
  /** The filter's choices: the workspace's services, and the purposes sent in the window. */
  services: { slug: string; name: string }[];
  purposes: string[];
  totals: OtpOutcomeCounts & { conversionPercent: number | null };
  byDay: (OtpActivityDay & { conversionPercent: number | null })[];
  byServiceAndPurpose: (OtpActivityGroup & { conversionPercent: number | null })[];
  latest: OtpRequestRow[];
}

/** verified / sent, to one decimal; null before anything was sent (no rate to speak of). */
export function conversionPercent(counts: Pick<OtpOutcomeCounts, 'sent' | 'verified'>) {
  return counts.sent === 0 ? null : Math.round((counts.verified / counts.sent) * 1000) / 10;
}

function fateOf(request: OtpActivityRequest, now: Date): OtpRequestRow['fate'] {
  if (request.verifiedAt) return 'verified';
  if (request.exhausted) return 'exhausted';
  if (request.status === 'failed') return 'failed to send';
  if (request.expiresAt <= now) return 'expired';
  return request.status === 'pending' ? 'not sent yet' : 'open';
}

const ZERO: OtpOutcomeCounts = {
  sent: 0,
  accepted: 0,
  pending: 0,
  failed: 0,
  verified: 0,
  expired: 0,
  exhausted: 0,
};

/** The rows' counts added up, with their conversion. */
function summed(rows: OtpOutcomeCounts[]): OtpActivity['totals'] {
  const totals = { ...ZERO };
  for (const row of rows)
    for (const key of Object.keys(ZERO) as (keyof OtpOutcomeCounts)[]) totals[key] += row[key];
  return { ...totals, conversionPercent: conversionPercent(totals) };
}

export async function loadOtpActivity(
  deps: Deps,
  input: {
    workspaceId: number;
    /** Numbers in full (recipients.read); masked `•••• 1234` otherwise. */
    fullNumbers: boolean;
    service?: string;
    purpose?: string;
  },
): Promise<OtpActivity> {
  // A filter that could match nothing sensible is no filter (a hand-edited address).
  const service = input.service && UUID.test(input.service) ? input.service.toLowerCase() : null;
  const purpose = input.purpose?.trim() ? input.purpose.trim().slice(0, 100) : null;
  const window: OtpActivityWindow = {
    workspaceId: input.workspaceId,
    days: ACTIVITY_DAYS,
    serviceSlug: service,
    purpose,
    maxFailures: MAX_FAILED_VERIFICATIONS,
    failureWindowMinutes: FAILED_VERIFICATION_WINDOW_MINUTES,
  };
  const [byDay, groups, latest, services, purposes] = await Promise.all([
    otpActivityByDay(deps.sql, window),
    otpActivityByServiceAndPurpose(deps.sql, window),
    latestOtpRequests(deps.sql, window, LATEST_REQUESTS),
    listOtpServices(deps.sql, input.workspaceId),
    otpPurposesSent(deps.sql, input.workspaceId, ACTIVITY_DAYS),
  ]);
  const now = new Date();
  return {
    days: ACTIVITY_DAYS,
    filter: { service, purpose },
    services: services.map(({ slug, name }) => ({ slug, name })),
    purposes,
    totals: summed(byDay),
    byDay: byDay.map((day) => ({ ...day, conversionPercent: conversionPercent(day) })),
    byServiceAndPurpose: groups.map((group) => ({
      ...group,
      conversionPercent: conversionPercent(group),
    })),
    latest: latest.map((request) => {
      const { exhausted: _, ...row } = request;
      return {
        ...row,
        recipient: numberShown(request.recipient, input.fullNumbers),
        fate: fateOf(request, now),
      };
    }),
  };
}

/** The dashboard's OTP block: the last 30 days' totals and conversion of every service. */
export async function loadOtpSummary(
  deps: Deps,
  workspaceId: number,
): Promise<OtpActivity['totals']> {
  const byDay = await otpActivityByDay(deps.sql, {
    workspaceId,
    days: ACTIVITY_DAYS,
    serviceSlug: null,
    purpose: null,
    maxFailures: MAX_FAILED_VERIFICATIONS,
    failureWindowMinutes: FAILED_VERIFICATION_WINDOW_MINUTES,
  });
  return summed(byDay);
}
