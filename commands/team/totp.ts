/**
 * The TOTP second factor (RFC 6238, otpauth): 6 digits, 30-second steps, SHA-1 (what every
 * authenticator app reads from an otpauth:// URI), one step of clock drift either way. The secret
 * is stored encrypted; a code is accepted once; failed codes are throttled like passwords.
 */
import { createHmac } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { TransactionSql } from '../../db/client.js';
import { completeSecondFactor, revokeUserConsoleSessions } from '../../db/console-sessions.js';
import { admitSignInAttempt, forgetAttempt } from '../../db/sign-in-failures.js';
import {
  findTotpState,
  listMemberSecondFactors,
  type MemberSecondFactor,
  removeTotp,
  resetMemberTotp,
  secondFactorRequiredFor,
  setRequireSecondFactor,
  storePendingTotpSecret,
  useTotpStep,
} from '../../db/totp.js';
import type { Role } from '../../domain/access.js';
import { decryptCredentials, encryptCredentials } from '../../security/credentials.js';
import { purposeKey } from '../../security/keys.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { conflict, InputError, notFound } from '../input.js';
import { SIGN_IN_LIMITS, signInWithPassword } from './sign-in.js';

type Deps = Pick<CommandDeps, 'sql' | 'secret'>;

const PERIOD = 30;
const DRIFT_STEPS = 1;
const CODE = /^\d{6}$/;

/** The additional authenticated data of a user's encrypted TOTP secret (security/credentials.ts). */
export const totpSecretContext = (userId: number) => `totp:${userId}`;
const context = totpSecretContext;

function totpOf(email: string, base32: string): TOTP {
  return new TOTP({
    issuer: 'Herald',
    label: email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(base32),
  });
}

export async function totpEnrolled(
  deps: Pick<CommandDeps, 'sql'>,
  userId: number,
): Promise<boolean> {
  return (await findTotpState(deps.sql, userId))?.enabledAt != null;
}

export interface TotpEnrolment {
  /** For typing into an authenticator app. */
  secret: string;
  /** otpauth://totp/Herald:<email>?secret=…: what a QR code would carry. */
  uri: string;
}

/** A fresh secret for the user to add to their app; in use once a code from it is confirmed. */
export async function beginTotpEnrolment(deps: Deps, userId: number): Promise<TotpEnrolment> {
  const state = await findTotpState(deps.sql, userId);
  if (!state) throw conflict`The account no longer exists`;
  if (state.enabledAt) throw conflict`A second factor is already set up for this account`;
  const secret = new Secret({ size: 20 }).base32;
  if (
    !(await storePendingTotpSecret(
      deps.sql,
      userId,
      encryptCredentials(deps.secret, context(userId), secret),
    ))
  )
    throw conflict`A second factor is already set up for this account`;
  return { secret, uri: totpOf(state.email, secret).toString() };
}

export type CodeCheck =
  | { outcome: 'accepted' }
  | { outcome: 'incorrect' }
  | { outcome: 'throttled'; retryAfterSeconds: number };

function throttleSubject(secret: string, userId: number): Buffer {
  return createHmac('sha256', purposeKey(secret, 'sign-in-throttle-hash'))
    .update(`totp:${userId}`)
    .digest();
}

/**
 * Five wrong codes per account in the password sign-in's window, from any address. Unlike the
 * password's limit this one is not also per address: only someone who has the password (or a
 * session) can try a code, so it is not a lock-out anyone can cause, and a six-digit code (three
 * steps accepted) is guessed with 3 chances in a million a try: fifty per 15 minutes would make
 * 1.4 % a day for whoever holds the password, the case a second factor is for.
 */
const CODE_FAILURES_PER_ACCOUNT = 5;

/**
 * Checks a code against the user's secret (`enable`: the enrolment's first code), throttled.
 * `alongside` runs in the transaction that takes the code's step, once it is accepted.
 */
export async function checkTotpCode(
  deps: Deps,
  userId: number,
  code: string,
  options: { enable: boolean; alongside?: (tx: TransactionSql) => Promise<void> } = {
    enable: false,
  },
): Promise<CodeCheck> {
  const admission = await admitSignInAttempt(
    deps.sql,
    [{ subject: throttleSubject(deps.secret, userId), limit: CODE_FAILURES_PER_ACCOUNT }],
    SIGN_IN_LIMITS.windowSeconds,
  );
  if (!admission.admitted)
    return { outcome: 'throttled', retryAfterSeconds: admission.retryAfterSeconds };
  const state = await findTotpState(deps.sql, userId);
  const token = code.replace(/\s+/g, '');
  if (!state?.secret || !CODE.test(token) || (!options.enable && !state.enabledAt))
    return { outcome: 'incorrect' };
  const base32 = String(decryptCredentials(deps.secret, context(userId), state.secret));
  const now = Date.now();
  const delta = totpOf(state.email, base32).validate({
    token,
    timestamp: now,
    window: DRIFT_STEPS,
  });
  if (delta === null) return { outcome: 'incorrect' };
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  const used = await deps.sql.begin(async (tx) => {
    if (!(await useTotpStep(tx, userId, step, options.enable))) return false;
    await options.alongside?.(tx);
    return true;
  });
  if (!used) return { outcome: 'incorrect' };
  await forgetAttempt(deps.sql, admission.attemptIds);
  return { outcome: 'accepted' };
}

/** The code after the password: right, and the session opens pages, with its sign-in line. */
export async function signInWithSecondFactor(
  deps: Deps,
  input: { userId: number; sessionId: number; workspaceId: number; code: string },
  actor: Actor,
): Promise<CodeCheck> {
  return checkTotpCode(deps, input.userId, input.code, {
    enable: false,
    alongside: async (tx) => {
      await completeSecondFactor(tx, input.sessionId);
      await writeAudit(tx, actor, input.workspaceId, {
        action: 'session.signed_in',
        target: null,
        details: { second_factor: true },
      });
    },
  });
}

/**
 * The enrolment's first code: right, and the factor is in use; every other console session of
 * the user ends (whoever had the password alone is signed out).
 */
export async function confirmTotpEnrolment(
  deps: Deps,
  input: {
    userId: number;
    email: string;
    code: string;
    keepSessionId: number;
    workspaceId: number;
  },
  actor: Actor,
): Promise<CodeCheck> {
  return checkTotpCode(deps, input.userId, input.code, {
    enable: true,
    alongside: async (tx) => {
      await revokeUserConsoleSessions(tx, input.userId, input.keepSessionId);
      await writeAudit(tx, actor, input.workspaceId, {
        action: 'second_factor.enrolled',
        target: `user ${input.email}`,
        details: {},
      });
    },
  });
}

/** Whether signing in must ask this user for a code: enrolled, or a workspace of theirs requires it. */
export async function secondFactorDue(
  deps: Pick<CommandDeps, 'sql'>,
  userId: number,
): Promise<{ enrolled: boolean; required: boolean }> {
  const [enrolled, required] = await Promise.all([
    totpEnrolled(deps, userId),
    secondFactorRequiredFor(deps.sql, userId),
  ]);
  return { enrolled, required };
}

/** An owner requires (or stops requiring) a second factor of every member; they need one first. */
export async function requireSecondFactor(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspaceId: number; ownerUserId: number; required: boolean },
  actor: Actor,
): Promise<void> {
  if (input.required && !(await totpEnrolled(deps, input.ownerUserId)))
    throw conflict`Set up your own second factor before requiring one of every member`;
  await deps.sql.begin(async (tx) => {
    const slug = await setRequireSecondFactor(tx, input.workspaceId, input.required);
    if (slug === undefined) throw notFound`No workspace has the id ${input.workspaceId}`;
    await writeAudit(tx, actor, input.workspaceId, {
      action: input.required
        ? 'workspace.second_factor_required'
        : 'workspace.second_factor_optional',
      target: `workspace ${slug}`,
      details: {},
    });
  });
}

export type TotpRemoval =
  | { outcome: 'removed'; sessionsEnded: number }
  | { outcome: 'not-enrolled' }
  | { outcome: 'incorrect-password' }
  | { outcome: 'incorrect-code' }
  | { outcome: 'throttled'; retryAfterSeconds: number }
  | { outcome: 'busy' };

/**
 * The user turns their own factor off, proving both factors once more: the password (checked and
 * throttled as a sign-in is) and a current code (checked, used and throttled as at sign-in). Their
 * other console sessions end, as when a factor is set up.
 */
export async function disableTotp(
  deps: Deps,
  input: {
    userId: number;
    email: string;
    password: string;
    code: string;
    address: string;
    keepSessionId: number;
    /** The workspace whose log records it: the session's. */
    workspaceId: number;
  },
  actor: Actor,
): Promise<TotpRemoval> {
  if (!(await totpEnrolled(deps, input.userId))) return { outcome: 'not-enrolled' };
  const password = await signInWithPassword(deps, input);
  if (password.outcome === 'incorrect') return { outcome: 'incorrect-password' };
  if (password.outcome !== 'signed-in') return password;
  if (password.user.id !== input.userId) return { outcome: 'incorrect-password' };
  const code = await checkTotpCode(deps, input.userId, input.code);
  if (code.outcome === 'incorrect') return { outcome: 'incorrect-code' };
  if (code.outcome === 'throttled') return code;
  const { removed, sessionsEnded } = await removeTotp(
    deps.sql,
    input.userId,
    input.keepSessionId,
    async (tx, cleared) => {
      await writeAudit(tx, actor, input.workspaceId, {
        action: 'second_factor.disabled',
        target: `user ${input.email}`,
        details: { sessions_ended: cleared.sessionsEnded },
      });
    },
  );
  return removed ? { outcome: 'removed', sessionsEnded } : { outcome: 'not-enrolled' };
}

export type { MemberSecondFactor };

const forbidden = (message: string) => new InputError('forbidden', [message]);

const ONLY_ADMINS_RESET = "Only an owner or admin can reset a member's two-step verification";
const resetsFactors = (by: { role: Role | null }) => by.role === 'owner' || by.role === 'admin';

/** The members of a workspace and whether each uses a second factor, as `byUserId` may reset it. */
export async function listWorkspaceSecondFactors(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspaceId: number; byUserId: number },
): Promise<MemberSecondFactor[]> {
  return listMemberSecondFactors(deps.sql, input.workspaceId, input.byUserId);
}

/**
 * Why `by` may not reset the second factor of `member` (of the workspace where `by` has that
 * role); undefined when they may. The profile's reset button shows exactly when this allows it.
 *
 * The factor belongs to the user, not the workspace: it guards every workspace they are in. So
 * (as GitHub leaves a user's two-step settings to the user, whatever organisations they are in)
 * a reset is refused when the member also belongs to a workspace where `by` could not reset it
 * (MemberSecondFactor.beyondReach): an admin of one workspace must not weaken the owner of
 * another. Such a member turns it off themselves, with their password and a code.
 */
export function secondFactorResetRefusal(
  by: { userId: number; role: Role | null },
  member: Pick<MemberSecondFactor, 'userId' | 'email' | 'role' | 'beyondReach'>,
): InputError | undefined {
  if (!resetsFactors(by)) return forbidden(ONLY_ADMINS_RESET);
  if (member.userId === by.userId)
    return conflict`Turn off your own two-step verification from your profile, with your password and a code`;
  if (member.role === 'owner' && by.role !== 'owner')
    return forbidden("Only an owner can reset an owner's two-step verification");
  if (member.beyondReach)
    return forbidden(
      `${member.email} also belongs to a workspace you do not manage, which their two-step verification protects too; only they can turn it off`,
    );
  return undefined;
}

/**
 * An owner or admin resets another member's second factor (a lost phone): it goes, with every
 * console session of theirs, and they set one up again, at their next page if the workspace
 * requires it. Refused as secondFactorResetRefusal says, checked on the memberships as they are
 * when the factor goes.
 */
export async function resetMemberSecondFactor(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspaceId: number; email: string; by: { userId: number; role: Role } },
  actor: Actor,
): Promise<{ email: string; sessionsEnded: number }> {
  if (!resetsFactors(input.by)) throw forbidden(ONLY_ADMINS_RESET);
  const email = input.email.trim();
  const reset = await resetMemberTotp(
    deps.sql,
    { workspaceId: input.workspaceId, email, byUserId: input.by.userId },
    (member) => {
      const refused = secondFactorResetRefusal(input.by, member);
      if (refused) throw refused;
    },
    async (tx, { member, sessionsEnded }) => {
      await writeAudit(tx, actor, input.workspaceId, {
        action: 'second_factor.reset',
        target: `member ${member.email}`,
        details: { sessions_ended: sessionsEnded },
      });
    },
  );
  if (!reset) throw notFound`This workspace has no member ${input.email}`;
  if (!reset.removed) throw conflict`${reset.member.email} has not set up two-step verification`;
  return { email: reset.member.email, sessionsEnded: reset.sessionsEnded };
}
