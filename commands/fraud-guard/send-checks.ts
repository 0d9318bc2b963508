/**
 * The fraud guard at send time (docs/fraud-guard.md "Fraud guard"): where a recipient may be sent to, how
 * often one number and one number range may be sent a code, and how many segments a workspace
 * may send in a day. Geo refusals are 422s of the request's field; the limits answer 429 with
 * Retry-After. Every refusal is counted per rule for the operator.
 */
import {
  DailyCapReachedError,
  insertCampaign,
  type NewCampaign,
  type SavedCampaign,
} from '../../db/campaigns.js';
import type { Sql, TransactionSql } from '../../db/client.js';
import {
  countGuardRefusal,
  findGuardOverrides,
  type GuardRule,
  lockOtpRange,
  readOtpSendHistory,
  recordRangeBlock,
} from '../../db/fraud-guard.js';
import { HeraldError, validationError } from '../../domain/errors.js';
import {
  breakerTrips,
  effectiveGuard,
  expandPrefixes,
  type GuardOverrides,
  type GuardSettings,
  geoRefusal,
  rangeOf,
  recipientWait,
} from '../../domain/fraud-guard.js';
import { guardRefusals } from '../../telemetry/metrics.js';

/** Counts a refusal without holding up its answer: a count lost to an outage is only a count. */
export function countRefusal(sql: Sql, workspaceId: number, rule: GuardRule, refusals = 1) {
  guardRefusals.inc({ rule }, refusals);
  countGuardRefusal(sql, workspaceId, rule, refusals).catch(() => undefined);
}

/** 429 with the seconds to wait. */
export function tooManyRequests(message: string, retryAfterSeconds: number): HeraldError {
  return new HeraldError('rate_limited', {
    message,
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
}

/**
 * The settings in force for a send: the workspace's, and the OTP service's when there is one.
 * The workspace's overrides read with the API key (`known`) spare a read when no service is named.
 */
export async function guardFor(
  sql: Sql,
  workspaceId: number,
  serviceSlug: string | null = null,
  known?: GuardOverrides | null,
): Promise<GuardSettings> {
  if (serviceSlug === null && known !== undefined) return effectiveGuard(known ?? {});
  const { workspace, service } = await findGuardOverrides(sql, workspaceId, serviceSlug);
  return effectiveGuard(workspace, service);
}

/** An OTP recipient in a blocked range or a country not allowed: 422 on `recipient`. */
export function checkOtpRecipient(
  sql: Sql,
  workspaceId: number,
  guard: GuardSettings,
  recipient: string,
): void {
  const refusal = geoRefusal(expandPrefixes(guard.blockedPrefixes), guard.otpCountries, recipient);
  if (!refusal) return;
  countRefusal(sql, workspaceId, refusal.rule === 'country' ? 'otp_country' : 'blocked_prefix');
  throw validationError({ recipient: [`The recipient field ${refusal.reason} for OTP.`] });
}

/** SMS recipients in blocked ranges or countries not allowed: 422 on each `recipients.N`. */
export function checkSmsRecipients(
  sql: Sql,
  workspaceId: number,
  guard: GuardSettings,
  recipients: readonly string[],
): void {
  const errors: Record<string, string[]> = {};
  const counts = new Map<GuardRule, number>();
  const blocked = expandPrefixes(guard.blockedPrefixes);
  recipients.forEach((recipient, index) => {
    const refusal = geoRefusal(blocked, guard.smsCountries, recipient);
    if (!refusal) return;
    const rule = refusal.rule === 'country' ? 'sms_country' : 'blocked_prefix';
    counts.set(rule, (counts.get(rule) ?? 0) + 1);
    errors[`recipients.${index}`] = [`The recipients.${index} field ${refusal.reason} for SMS.`];
  });
  if (counts.size === 0) return;
  for (const [rule, refusals] of counts) countRefusal(sql, workspaceId, rule, refusals);
  throw validationError(errors);
}

/**
 * A refusal an OTP send's transaction found. A breaker trip is recorded by that transaction, so it
 * commits; any other refusal leaves nothing to keep.
 */
export interface OtpRefusal {
  rule: GuardRule;
  error: HeraldError;
  commit: boolean;
}

/**
 * Admits an OTP send inside the transaction that saves it: the range lock taken first makes the
 * counts and the save one step (30 concurrent sends with a limit of 5 save exactly 5, on any
 * number of api replicas). Undefined when the send may go.
 */
export async function admitOtpSend(
  tx: TransactionSql,
  input: { workspaceId: number; recipient: string; guard: GuardSettings },
): Promise<OtpRefusal | undefined> {
  const { guard, workspaceId, recipient } = input;
  const breaker = guard.rangeBreaker;
  if (guard.otpPerRecipient.length === 0 && breaker === 'off') return undefined;
  const range = rangeOf(recipient);
  // Pipelined: Postgres runs the count after the lock is held, one round trip for both.
  const [, history] = await Promise.all([
    lockOtpRange(tx, workspaceId, range),
    readOtpSendHistory(tx, {
      workspaceId,
      recipient,
      range,
      recipientSeconds: Math.max(1, ...guard.otpPerRecipient.map((window) => window.seconds)),
      recipientLimit: Math.max(1, ...guard.otpPerRecipient.map((window) => window.sends)),
      rangeSeconds: breaker === 'off' ? 1 : breaker.seconds,
    }),
  ]);
  if (breaker !== 'off' && history.blockedUntil)
    return rangeRefusal(range, history.blockedUntil, history.now, false);
  const wait = recipientWait(guard.otpPerRecipient, history.recipientSends, history.now);
  if (wait > 0)
    return {
      rule: 'otp_per_recipient',
      commit: false,
      error: tooManyRequests(
        `Too many codes were sent to this recipient. Try again in ${wait} seconds.`,
        wait,
      ),
    };
  if (breaker !== 'off' && breakerTrips(breaker, history.rangeSends, history.rangeVerified)) {
    const block = await recordRangeBlock(tx, {
      workspaceId,
      range,
      coolDownSeconds: breaker.coolDownSeconds,
      sends: history.rangeSends,
      verified: history.rangeVerified,
      windowSeconds: breaker.seconds,
    });
    return rangeRefusal(range, block.blockedUntil, history.now, true);
  }
  return undefined;
}

function rangeRefusal(range: string, until: Date, now: number, commit: boolean): OtpRefusal {
  const wait = until.getTime() / 1000 - now;
  return {
    rule: 'range_breaker',
    commit,
    error: tooManyRequests(
      `Codes to numbers starting ${range} are paused until ${until.toISOString()}: many were sent there recently and almost none verified.`,
      wait,
    ),
  };
}

/** A send that would take the workspace past its daily cap: 429 until the next UTC day. */
export function dailyCapReached(cap: number, now = new Date()): HeraldError {
  const resets = new Date(now);
  resets.setUTCHours(24, 0, 0, 0);
  return tooManyRequests(
    `The workspace's daily cap of ${cap} segments would be exceeded; it resets at ${resets.toISOString()}.`,
    (resets.getTime() - now.getTime()) / 1000,
  );
}

/** Saves a campaign (db/campaigns.ts), its daily-cap refusal answered as the 429 above. */
export async function insertCampaignWithinCap(
  sql: Sql,
  input: NewCampaign | Promise<NewCampaign>,
  alongside?: Parameters<typeof insertCampaign>[2],
  committing?: Parameters<typeof insertCampaign>[3],
): Promise<SavedCampaign> {
  try {
    return await insertCampaign(sql, input, alongside, committing);
  } catch (error) {
    if (!(error instanceof DailyCapReachedError)) throw error;
    countRefusal(sql, (await input).workspaceId, 'daily_cap');
    throw dailyCapReached(error.cap);
  }
}
