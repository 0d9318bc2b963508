import { createHmac } from 'node:crypto';
import type { Sql } from '../db/client.js';
import { admitSignInAttempt, forgetAttempt } from '../db/sign-in-failures.js';
import { findUserByEmail, type User } from '../db/users.js';
import { purposeKey } from '../security/keys.js';
import { PasswordHashingBusyError, verifyPassword } from '../security/password.js';

/**
 * Failed password sign-ins are limited per account and per client address within a sliding
 * window. An account takes five failures (the sixth attempt is refused, the right password
 * included); an address takes twenty, across accounts, because people behind one NAT share it
 * while one address spraying passwords over many accounts is still stopped. The limit counts
 * attempts before their password is checked, so it holds exactly under concurrency.
 */
export const SIGN_IN_LIMITS = {
  windowSeconds: 15 * 60,
  failuresPerAccount: 5,
  failuresPerAddress: 20,
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

function subjectHash(secret: string, kind: 'account' | 'address', value: string): Buffer {
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
    [
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
