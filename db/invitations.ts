import type { Role, Standing } from '../domain/access.js';
import type { Sql, TransactionSql } from './client.js';

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface InvitationListing {
  id: number;
  email: string;
  role: Role;
  status: InvitationStatus;
  expiresAt: Date;
}

export type NewInvitation =
  | { outcome: 'created'; id: number; expiresAt: Date }
  | { outcome: 'already_member' }
  | { outcome: 'already_invited'; id: number };

/**
 * Saves an invitation (only the keyed hash of its token) unless the email already belongs to
 * a member or has a pending invitation: one live token per person and workspace. A member's
 * invitation records them as its inviter once `checkInviter` (which sees their membership,
 * undefined when there is none, held until the commit: a demotion waits, then revokes it; it may
 * throw) allows it.
 */
export async function insertInvitation(
  sql: Sql,
  input: {
    workspaceId: number;
    email: string;
    role: Role;
    tokenHash: Buffer;
    expiresInDays: number;
    /** The member inviting; none for the operator's. */
    invitedBy?: number | null;
  },
  checkInviter: (inviter: Standing | undefined) => void = () => {},
  /** Runs in the same transaction once the invitation is saved (its audit line). */
  alongside?: (tx: TransactionSql, id: number) => Promise<void>,
): Promise<NewInvitation> {
  return sql.begin(async (tx) => {
    // Two concurrent invitations of the same person wait for each other here.
    await tx`select pg_advisory_xact_lock(hashtext('invitation:' || ${input.workspaceId}::text || ':' || lower(${input.email})))`;
    const invitedBy = input.invitedBy ?? null;
    if (invitedBy !== null) {
      const [inviter] = await tx<Standing[]>`
        select role, permissions, status from workspace_members
        where workspace_id = ${input.workspaceId} and user_id = ${invitedBy}
        for share`;
      checkInviter(inviter);
    }
    const [member] = await tx`
      select 1 from workspace_members m join users u on u.id = m.user_id
      where m.workspace_id = ${input.workspaceId} and lower(u.email) = lower(${input.email})`;
    if (member) return { outcome: 'already_member' } as const;
    const [pending] = await tx<{ id: number }[]>`
      select id from invitations
      where workspace_id = ${input.workspaceId} and lower(email) = lower(${input.email})
        and accepted_at is null and revoked_at is null and expires_at > now()`;
    if (pending) return { outcome: 'already_invited', id: pending.id } as const;
    const [row] = await tx<{ id: number; expiresAt: Date }[]>`
      insert into invitations (workspace_id, email, role, token_hash, invited_by, expires_at)
      values (${input.workspaceId}, ${input.email}, ${input.role}, ${input.tokenHash},
              ${invitedBy}, now() + make_interval(days => ${input.expiresInDays}))
      returning id, expires_at`;
    const { id, expiresAt } = row as { id: number; expiresAt: Date };
    await alongside?.(tx, id);
    return { outcome: 'created', id, expiresAt } as const;
  });
}

export async function listInvitations(sql: Sql, workspaceId: number): Promise<InvitationListing[]> {
  return sql<InvitationListing[]>`
    select id, email, role, expires_at,
      -- Accepted or revoked for good; otherwise pending until it expires.
      case when accepted_at is not null then 'accepted'
           when revoked_at is not null then 'revoked'
           when expires_at <= now() then 'expired'
           else 'pending' end as status
    from invitations where workspace_id = ${workspaceId}
    order by id`;
}

/** Revokes a pending (or expired) invitation; an accepted one cannot be taken back here. */
export async function revokeInvitation(
  sql: Sql,
  id: number,
  /** Runs in the revoking transaction (its audit line), given whose invitation it was. */
  alongside?: (
    tx: TransactionSql,
    invitation: { workspaceId: number; email: string },
  ) => Promise<void>,
): Promise<'revoked' | 'already_revoked' | 'accepted' | 'not_found'> {
  return sql.begin(async (tx) => {
    const [invitation] = await tx<
      { acceptedAt: Date | null; revokedAt: Date | null; workspaceId: number; email: string }[]
    >`
      select accepted_at, revoked_at, workspace_id, email from invitations where id = ${id} for update`;
    if (!invitation) return 'not_found';
    if (invitation.acceptedAt) return 'accepted';
    if (invitation.revokedAt) return 'already_revoked';
    await tx`update invitations set revoked_at = now() where id = ${id}`;
    await alongside?.(tx, invitation);
    return 'revoked';
  });
}

export interface RevokedInvitation {
  id: number;
  email: string;
  role: Role;
}

/**
 * Revokes the pending invitations `inviterId` made to the workspace that `keeps` (given each one's
 * role) no longer allows, in the transaction that changes or ends their membership.
 */
export async function revokeInvitationsOf(
  tx: TransactionSql,
  workspaceId: number,
  inviterId: number,
  keeps: (role: Role) => boolean,
): Promise<RevokedInvitation[]> {
  const pending = await tx<RevokedInvitation[]>`
    select id, email, role from invitations
    where workspace_id = ${workspaceId} and invited_by = ${inviterId}
      and accepted_at is null and revoked_at is null and expires_at > now()
    order by id
    for update`;
  const revoked = pending.filter((invitation) => !keeps(invitation.role));
  if (revoked.length > 0) {
    await tx`
      update invitations set revoked_at = now()
      where id in ${tx(revoked.map((invitation) => invitation.id))}`;
  }
  return revoked;
}
