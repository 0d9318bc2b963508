import { createHmac } from 'node:crypto';
import type { Sql } from '../../db/client.js';
import { admitSignInAttempt, forgetAttempt } from '../../db/sign-in-failures.js';
import { findUserByEmail, type User } from '../../db/users.js';
import { purposeKey } from '../../security/keys.js';
import { PasswordHashingBusyError, verifyPassword } from '../../security/password.js';

/**
 * Failed password sign-ins are limited within a sliding window of 15 minutes on three subjects:
 *
 * - an account from one client address: 5 failures, then that address is refused for that
 *   account (the right password included). This is the tight limit, and one that only the
 *   guesser's own address feels: five wrong passwords from an attacker do not lock the owner out
 *   of their account from their own address, as a per-account limit of five did (issue 24).
 * - a client address across accounts: 20, because people behind one NAT share an address, while
 *   one address spraying a password over many accounts is still stopped.
 * - an account from every address: 50. It bounds a distributed guess at one account to 4,800 a
 *   day, and locking the owner out now takes at least ten addresses (five failures each) every
 *   15 minutes. Higher would let a botnet guess faster; lower would let a handful of addresses
 *   lock any account again.
 *
 * The limit counts attempts before their password is checked, so it holds exactly under
 * concurrency.
 */
export const SIGN_IN_LIMITS = {
  windowSeconds: 15 * 60,
  failuresPerAccountAndAddress: 5,
  failuresPerAddress: 20,
  failuresPerAccount: 50,
} as const;

/** A password check against this hash when the email is unknown, so timing does not tell. */
const UNKNOWN_USER_HASH =
  '$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** RFC 5321's limit on an address: anything longer is no account's email. */
const MAX_EMAIL_LENGTH = 254;

export type SignInResult =
  | { outcome: 'signed-in'; user: User }
  | { outcome: 'incorrect' }
  | { outcome: 'throttled'; retryAfterSeconds: number }
  | { outcome: 'busy' };

function subjectHash(
  secret: string,
  kind: 'account' | 'address' | 'account-address',
  value: string,
): Buffer {
  return createHmac('sha256', purposeKey(secret, 'sign-in-throttle-hash'))
    .update(`${kind}:${value}`)
    .digest();
}

/**
 * A password sign-in as every sign-in form of Herald does it (the OAuth authorization server;
 * the console's to come): the throttle first, then the password. Unknown accounts are answered
 * as known ones, and cost the same. `address` is the client's address as the api believes it
 * (TRUSTED_PROXIES).
 */
export async function signInWithPassword(
  deps: { sql: Sql; secret: string },
  input: { email: string; password: string; address: string },
): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const admission = await admitSignInAttempt(
    deps.sql,
    // Every attempt locks its subjects in this order of kinds, so two attempts never deadlock.
    [
      {
        // JSON: no email and address pair reads as another.
        subject: subjectHash(
          deps.secret,
          'account-address',
          JSON.stringify([email, input.address]),
        ),
        limit: SIGN_IN_LIMITS.failuresPerAccountAndAddress,
      },
      {
        subject: subjectHash(deps.secret, 'account', email),
        limit: SIGN_IN_LIMITS.failuresPerAccount,
      },
      {
        subject: subjectHash(deps.secret, 'address', input.address),
        limit: SIGN_IN_LIMITS.failuresPerAddress,
      },
    ],
    SIGN_IN_LIMITS.windowSeconds,
  );
  if (!admission.admitted) {
    return { outcome: 'throttled', retryAfterSeconds: admission.retryAfterSeconds };
  }
  const user =
    email.length <= MAX_EMAIL_LENGTH ? await findUserByEmail(deps.sql, email) : undefined;
  let valid: boolean;
  try {
    valid = await verifyPassword(input.password, user?.passwordHash ?? UNKNOWN_USER_HASH);
  } catch (error) {
    if (!(error instanceof PasswordHashingBusyError)) throw error;
    // Never checked: not a failure.
    await forgetAttempt(deps.sql, admission.attemptIds);
    return { outcome: 'busy' };
  }
  if (!user || !valid) return { outcome: 'incorrect' };
  await forgetAttempt(deps.sql, admission.attemptIds);
  return { outcome: 'signed-in', user };
}
