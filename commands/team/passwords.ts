/**
 * Passwords after the account exists: the user changes their own (proving the current one), an
 * owner or admin issues a member a one-time reset link, the member sets a new password at it, and
 * an operator sets one with `herald user set-password`. Each ends the user's other console
 * sessions and writes its audit line in the change's transaction; never the password.
 *
 * Why a link and not a temporary password: as Stripe's and Twilio's consoles do (a reset email,
 * never a password an admin sees or chooses), the admin learns nothing that signs in as the
 * member, and the member's new password is only ever typed by the member. Herald sends no email,
 * so the link is shown to the admin once, like an invitation link, to pass on.
 */
import {
  findOpenPasswordReset,
  insertPasswordReset,
  listUserWorkspaceIds,
  lockMemberForReset,
  type OpenPasswordReset,
  replacePassword,
  usePasswordReset,
} from '../../db/passwords.js';
import { findUserByEmail } from '../../db/users.js';
import type { Role } from '../../domain/access.js';
import { hashPassword } from '../../security/password.js';
import { findByKeyedHash, issuePasswordResetToken, keyedHash } from '../../security/tokens.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { conflict, fieldsOf, InputError, invalid, notFound } from '../input.js';
import { signInWithPassword } from './sign-in.js';

type Deps = Pick<CommandDeps, 'sql' | 'secret'>;

export const MIN_PASSWORD_LENGTH = 8;
const MAX_PASSWORD_LENGTH = 200;
/** How long a reset link works: a working day for the member to get it and use it. */
export const RESET_LINK_HOURS = 24;
const RESET_TOKEN = /^hlr_[A-Za-z0-9_-]{43}$/;

export interface NewPasswordInput {
  password?: string;
  passwordConfirmation?: string;
}

/** The rules of every new password (an account's first, a change, a reset): its text when kept. */
export function checkNewPassword(input: NewPasswordInput): string {
  const field = fieldsOf<NewPasswordInput>();
  const password = input.password ?? '';
  if (password.length < MIN_PASSWORD_LENGTH)
    throw invalid`${field('password')} must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH)
    throw invalid`${field('password')} must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (password !== input.passwordConfirmation)
    throw invalid`${field('passwordConfirmation')} does not match the password`;
  return password;
}

export interface PasswordChangeInput extends NewPasswordInput {
  currentPassword?: string;
}

export type PasswordChange =
  | { outcome: 'changed'; sessionsEnded: number }
  | { outcome: 'throttled'; retryAfterSeconds: number }
  | { outcome: 'busy' };

/**
 * The signed-in member changes their own password: the current one is checked (and throttled)
 * as a sign-in is, then the new one replaces it and their other browsers are signed out.
 */
export async function changeOwnPassword(
  deps: Deps,
  actor: Actor,
  input: PasswordChangeInput & {
    userId: number;
    email: string;
    /** Where the current password is typed from: its failures are throttled by it. */
    address: string;
    workspaceId: number;
    keepSessionId: number;
  },
): Promise<PasswordChange> {
  const field = fieldsOf<PasswordChangeInput>();
  const password = checkNewPassword(input);
  const current = await signInWithPassword(deps, {
    email: input.email,
    password: input.currentPassword ?? '',
    address: input.address,
  });
  if (current.outcome === 'throttled' || current.outcome === 'busy') return current;
  if (current.outcome === 'incorrect' || current.user.id !== input.userId)
    throw invalid`${field('currentPassword')} is incorrect`;
  const passwordHash = await hashPassword(password);
  const sessionsEnded = await deps.sql.begin(async (tx) => {
    const ended = await replacePassword(tx, input.userId, passwordHash, input.keepSessionId);
    await writeAudit(tx, actor, input.workspaceId, {
      action: 'user.password_changed',
      target: `user ${input.email}`,
      details: { sessions_ended: ended },
    });
    return ended;
  });
  return { outcome: 'changed', sessionsEnded };
}

const forbidden = (message: string) => new InputError('forbidden', [message]);

/**
 * An owner or admin issues a one-time link for a member of their workspace to set a new password.
 * The password guards every workspace the member is in, so (as for a second factor's reset) it is
 * refused for an owner unless by an owner, for oneself (the profile changes one's own), and for a
 * member who also belongs where the actor does not manage them. The old password keeps working
 * until the member uses the link, so a stray reset locks nobody out.
 */
export async function issuePasswordReset(
  deps: Deps,
  actor: Actor,
  input: { workspaceId: number; userId: number; by: { userId: number; role: Role | null } },
): Promise<{ email: string; token: string; expiresAt: Date }> {
  const { by } = input;
  if (by.role !== 'owner' && by.role !== 'admin')
    throw forbidden("Only an owner or admin can reset a member's password");
  const token = issuePasswordResetToken();
  return deps.sql.begin(async (tx) => {
    const member = await lockMemberForReset(tx, {
      workspaceId: input.workspaceId,
      userId: input.userId,
      byUserId: by.userId,
    });
    if (!member) throw notFound`This workspace has no such member`;
    if (member.userId === by.userId)
      throw conflict`Change your own password from your profile, with your current password`;
    if (member.role === 'owner' && by.role !== 'owner')
      throw forbidden("Only an owner can reset an owner's password");
    if (member.beyondReach)
      throw forbidden(
        `${member.email} also belongs to a workspace you do not manage, which their password protects too; only they can change it`,
      );
    const expiresAt = await insertPasswordReset(tx, {
      userId: member.userId,
      workspaceId: input.workspaceId,
      tokenHash: keyedHash(deps.secret, 'password-reset-hash', token),
      createdByUserId: by.userId,
      expiresInHours: RESET_LINK_HOURS,
    });
    await writeAudit(tx, actor, input.workspaceId, {
      action: 'user.password_reset_issued',
      target: `member ${member.email}`,
      details: { expires_in_hours: RESET_LINK_HOURS },
    });
    return { email: member.email, token, expiresAt };
  });
}

export type { OpenPasswordReset };

/** The open reset link behind a token, or undefined (unknown, used, replaced, expired). */
export async function findPasswordReset(
  deps: Deps,
  token: string,
): Promise<OpenPasswordReset | undefined> {
  if (!RESET_TOKEN.test(token)) return undefined;
  const found = await findByKeyedHash(deps.secret, 'password-reset-hash', token, (hash) =>
    findOpenPasswordReset(deps.sql, hash),
  );
  return found?.row;
}

/**
 * The member sets their new password at the link: it is used once, and every console session of
 * theirs ends (whoever had the old password is signed out). `from`: the browser that used it.
 */
export async function completePasswordReset(
  deps: Deps,
  reset: OpenPasswordReset,
  input: NewPasswordInput & { address: string; userAgent: string | null },
): Promise<{ sessionsEnded: number }> {
  const passwordHash = await hashPassword(checkNewPassword(input));
  return deps.sql.begin(async (tx) => {
    if (!(await usePasswordReset(tx, reset.id)))
      throw conflict`This reset link has already been used, was replaced by a newer one or has expired`;
    const sessionsEnded = await replacePassword(tx, reset.userId, passwordHash, null);
    const actor: Actor = {
      kind: 'member',
      userId: reset.userId,
      email: reset.email,
      address: input.address,
      userAgent: input.userAgent,
    };
    await writeAudit(tx, actor, reset.workspaceId, {
      action: 'user.password_reset',
      target: `user ${reset.email}`,
      details: { sessions_ended: sessionsEnded },
    });
    return { sessionsEnded };
  });
}

/**
 * An operator sets a user's password (`herald user set-password`), for a user locked out with no
 * owner or admin to reset it. Every console session of theirs ends; the line goes to each
 * workspace they belong to, since the password guards each.
 */
export async function setUserPassword(
  deps: Deps,
  actor: Actor,
  input: NewPasswordInput & { email?: string },
): Promise<{ email: string; sessionsEnded: number }> {
  const field = fieldsOf<{ email?: string }>();
  const email = (input.email ?? '').trim();
  if (email === '') throw invalid`${field('email')} is required`;
  const password = checkNewPassword(input);
  const user = await findUserByEmail(deps.sql, email);
  if (!user) throw notFound`No user has the email ${email}`;
  const passwordHash = await hashPassword(password);
  const sessionsEnded = await deps.sql.begin(async (tx) => {
    const ended = await replacePassword(tx, user.id, passwordHash, null);
    for (const workspaceId of await listUserWorkspaceIds(tx, user.id))
      await writeAudit(tx, actor, workspaceId, {
        action: 'user.password_changed',
        target: `user ${user.email}`,
        details: { sessions_ended: ended },
      });
    return ended;
  });
  return { email: user.email, sessionsEnded };
}
