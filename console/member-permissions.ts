/**
 * Who may change whose permissions on the Team page, on top of `team.manage` (owner or admin with
 * members.read): the use-case's own rules (commands/team/members.ts), which refuse the change itself
 * on the memberships as locked; here they only decide what the page offers.
 */
import type { ConsoleVisitor } from '../commands/console/sessions.js';
import { grantRefusal as grantsRefusal } from '../commands/team/members.js';
import type { Permission } from '../domain/access.js';

export { permissionEditRefusal } from '../commands/team/members.js';

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

/** Why `visitor` may not grant `permission`; undefined when they may. */
export function grantRefusal(visitor: ConsoleVisitor, permission: Permission): string | undefined {
  return grantsRefusal(visitor, [permission]);
}
