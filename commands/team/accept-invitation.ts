/**
 * Accepting an invitation at its link: a new account sets its password; an email that already
 * has an account signs in (the one throttled sign-in). Either way the user becomes a member with
 * the invited role and that role's permissions.
 */

import type { TransactionSql } from '../../db/client.js';
import {
  acceptInvitation,
  findOpenInvitation,
  type OpenInvitation,
} from '../../db/invitation-acceptance.js';
import { ROLE_PERMISSIONS } from '../../domain/access.js';
import { hashPassword } from '../../security/password.js';
import { findByKeyedHash } from '../../security/tokens.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { conflict } from '../input.js';
import { checkNewPassword, type NewPasswordInput } from './passwords.js';
import { type SignInResult, signInWithPassword } from './sign-in.js';

type Deps = Pick<CommandDeps, 'sql' | 'secret'>;

const INVITATION_TOKEN = /^hli_[A-Za-z0-9_-]{43}$/;

export type { OpenInvitation };

/** The pending invitation behind a link's token, or undefined (unknown, used, revoked, expired). */
export async function findInvitation(
  deps: Deps,
  token: string,
): Promise<OpenInvitation | undefined> {
  if (!INVITATION_TOKEN.test(token)) return undefined;
  // Sent before a rotation, its hash is under an older key of the ring.
  const found = await findByKeyedHash(deps.secret, 'invitation-hash', token, (hash) =>
    findOpenInvitation(deps.sql, hash),
  );
  return found?.row;
}

const gone = () => conflict`This invitation has already been used, revoked or has expired`;

/** Where the acceptance came from: the browser's address and user agent, for its audit line. */
export interface AcceptedFrom {
  address: string;
  userAgent: string | null;
}

/** The new member's line, written in the acceptance's transaction: they are its actor. */
const acceptedLine =
  (invitation: OpenInvitation, email: string, from: AcceptedFrom) =>
  (tx: TransactionSql, userId: number) =>
    writeAudit(
      tx,
      { kind: 'member', userId, email, address: from.address, userAgent: from.userAgent },
      invitation.workspaceId,
      {
        action: 'invitation.accepted',
        target: `member ${invitation.email}`,
        details: { role: invitation.role, invitation_id: invitation.id },
      },
    );

/** For a new account: the password it will sign in with, typed twice. */
export type NewAccountInput = NewPasswordInput;

/** For an email without an account: the password it will sign in with. */
export async function acceptWithNewAccount(
  deps: Deps,
  invitation: OpenInvitation,
  input: NewAccountInput,
  from: AcceptedFrom,
): Promise<{ userId: number }> {
  const password = checkNewPassword(input);
  const result = await acceptInvitation(
    deps.sql,
    {
      invitationId: invitation.id,
      userId: null,
      newPasswordHash: await hashPassword(password),
      permissions: ROLE_PERMISSIONS[invitation.role],
    },
    acceptedLine(invitation, invitation.email, from),
  );
  if (result.outcome === 'account_exists')
    throw conflict`${invitation.email} already has an account: sign in to accept`;
  if (result.outcome === 'gone') throw gone();
  return { userId: result.userId };
}

/** For an email that has an account: its password, checked (and throttled) as any sign-in. */
export async function acceptAsExistingUser(
  deps: Deps,
  invitation: OpenInvitation,
  input: { password: string } & AcceptedFrom,
): Promise<
  Exclude<SignInResult, { outcome: 'signed-in' }> | { outcome: 'accepted'; userId: number }
> {
  const result = await signInWithPassword(deps, {
    email: invitation.email,
    password: input.password,
    address: input.address,
  });
  if (result.outcome !== 'signed-in') return result;
  const accepted = await acceptInvitation(
    deps.sql,
    {
      invitationId: invitation.id,
      userId: result.user.id,
      newPasswordHash: null,
      permissions: ROLE_PERMISSIONS[invitation.role],
    },
    acceptedLine(invitation, result.user.email, input),
  );
  if (accepted.outcome !== 'accepted') throw gone();
  return { outcome: 'accepted', userId: result.user.id };
}
