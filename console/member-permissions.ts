/**
 * Who may change whose permissions on the Team page, on top of `team.manage` (owner or admin with
 * members.read): only an owner changes an owner's, or their own (an admin granting themselves
 * back what an owner took would undo the owner), and nobody grants what they do not hold. The
 * last owner holding members.read is kept by the use-case itself (commands/members.ts).
 */
import type { ConsoleVisitor } from '../commands/console-sessions.js';
import type { Permission, Role } from '../domain/access.js';

/** What each permission opens, in the words of the permissions page. */
export const PERMISSION_NOTES: Record<Permission, string> = {
  'developer_tools.read':
    'Developer Tools (API keys, MCP & AI, webhooks, OTP services) and every MCP tool.',
  'campaigns.read':
    'Campaigns, batch reports and Quick Send; the campaign and Quick Send MCP tools.',
  'messages.read':
    "Sending an OTP with a saved template (template_slug) with the member's API keys.",
  'reports.read': 'The dashboard; the completed-campaigns summary over MCP.',
  'members.read':
    'The Team page and team statistics over MCP; owners and admins need it to manage members.',
  'recipients.read':
    'Recipient numbers in full on batch reports; without it, only their last four digits.',
};

/** Why `visitor` may not change the permissions of `member` at all; undefined when they may. */
export function permissionEditRefusal(
  visitor: ConsoleVisitor,
  member: { userId: number; role: Role },
): string | undefined {
  if (visitor.role === 'owner') return undefined;
  if (member.role === 'owner') return "Only an owner can change an owner's permissions.";
  if (member.userId === visitor.userId)
    return 'Only an owner can change your own permissions; ask an owner of the workspace.';
  return undefined;
}

/** Why `visitor` may not grant `permission`; undefined when they may. */
export function grantRefusal(visitor: ConsoleVisitor, permission: Permission): string | undefined {
  return visitor.permissions.includes(permission)
    ? undefined
    : `You can grant only permissions you hold yourself, and you do not hold ${permission}.`;
}
