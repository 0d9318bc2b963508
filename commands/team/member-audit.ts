/**
 * The audit lines of a member's change (commands/team/members.ts), by what changed: nothing
 * recorded when nothing did. The same lines whichever door asked (the Team page's role, suspend
 * and reactivate forms, a member's permissions page, `herald member update|remove`).
 */
import type { Member } from '../../db/members.js';
import type { AuditLine } from '../audit.js';
import type { InvitationRevokedWithInviter } from './members.js';

/** What the change asked for: a role, and whether it named permissions (a set, grants or revokes). */
export interface MemberChangeAsked {
  role?: string;
  permissions: boolean;
}

export function memberChangeLines(
  before: Member,
  after: Member,
  asked: MemberChangeAsked,
): AuditLine[] {
  const target = `member ${after.email}`;
  const permissionsChanged = after.permissions.join() !== before.permissions.join();
  const lines: AuditLine[] = [];
  // A role given alone also resets the permissions to the role's: that is the role change.
  if (
    asked.role !== undefined &&
    (after.role !== before.role || (!asked.permissions && permissionsChanged))
  )
    lines.push({ action: 'member.role_changed', target, details: { role: after.role } });
  if (after.status !== before.status)
    lines.push({
      action: after.status === 'suspended' ? 'member.suspended' : 'member.reactivated',
      target,
      details: {},
    });
  if (asked.permissions && permissionsChanged) {
    const permissions = after.permissions.join(',');
    for (const permission of after.permissions.filter((held) => !before.permissions.includes(held)))
      lines.push({
        action: 'member.permission_granted',
        target,
        details: { permission, permissions },
      });
    for (const permission of before.permissions.filter((held) => !after.permissions.includes(held)))
      lines.push({
        action: 'member.permission_revoked',
        target,
        details: { permission, permissions },
      });
  }
  return lines;
}

/** The pending invitations the change revoked with it: one line each, with the reason. */
export function invitationsRevokedLines(
  revoked: readonly InvitationRevokedWithInviter[],
): AuditLine[] {
  return revoked.map((invitation) => ({
    action: 'invitation.revoked',
    target: `invitation ${invitation.email}`,
    details: { invitation_id: invitation.id, reason: invitation.reason },
  }));
}
