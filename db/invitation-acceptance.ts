import type { Permission, Role } from '../domain/access.js';
import type { Sql, TransactionSql } from './client.js';

export interface OpenInvitation {
  id: number;
  email: string;
  role: Role;
  workspaceId: number;
  workspaceSlug: string;
  workspaceName: string;
  expiresAt: Date;
  /** The account the invited email already has, if any. */
  existingUserId: number | null;
}

/** The pending, unexpired invitation stored under `tokenHash`. */
export async function findOpenInvitation(
  sql: Sql,
  tokenHash: Buffer,
): Promise<OpenInvitation | undefined> {
  const [invitation] = await sql<OpenInvitation[]>`
    select i.id, i.email, i.role, i.workspace_id, w.slug as workspace_slug,
           w.name as workspace_name, i.expires_at, u.id as existing_user_id
    from invitations i
    join workspaces w on w.id = i.workspace_id
    left join users u on lower(u.email) = lower(i.email)
    where i.token_hash = ${tokenHash} and i.accepted_at is null and i.revoked_at is null
      and i.expires_at > now()`;
  return invitation;
}

export type InvitationAcceptance =
  | { outcome: 'accepted'; userId: number }
  | { outcome: 'gone' }
  | { outcome: 'account_exists' };

/**
 * Accepts the invitation once: the membership with the invited role and its permissions, for
 * `userId` (an existing account that signed in) or a new account with `newPasswordHash`.
 */
export async function acceptInvitation(
  sql: Sql,
  input: {
    invitationId: number;
    userId: number | null;
    newPasswordHash: string | null;
    permissions: readonly Permission[];
  },
  /** Runs in the same transaction once the user is a member (its audit line). */
  alongside: (tx: TransactionSql, userId: number) => Promise<void> = async () => {},
): Promise<InvitationAcceptance> {
  return sql.begin(async (tx) => {
    const [invitation] = await tx<{ email: string; role: Role; workspaceId: number }[]>`
      select email, role, workspace_id from invitations
      where id = ${input.invitationId} and accepted_at is null and revoked_at is null
        and expires_at > now()
      for update`;
    if (!invitation) return { outcome: 'gone' } as const;
    let userId = input.userId;
    if (userId === null) {
      const [created] = await tx<{ id: number }[]>`
        insert into users (email, password_hash) values (${invitation.email}, ${input.newPasswordHash})
        on conflict ((lower(email))) do nothing
        returning id`;
      // The email got an account since the page was shown: it must sign in instead.
      if (!created) return { outcome: 'account_exists' } as const;
      userId = created.id;
    }
    await tx`
      insert into workspace_members (workspace_id, user_id, role, permissions)
      values (${invitation.workspaceId}, ${userId}, ${invitation.role},
              ${input.permissions as string[]})
      on conflict (workspace_id, user_id) do nothing`;
    await tx`update invitations set accepted_at = now() where id = ${input.invitationId}`;
    await alongside(tx, userId);
    return { outcome: 'accepted', userId } as const;
  });
}
