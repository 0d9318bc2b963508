/**
 * What a member may see and do in the console: the permissions the MCP server checks
 * (domain/access.ts), read from the membership on every request, and for actions that change
 * something, the member's current role as well. Nothing comes from the browser.
 */
import type { ConsoleVisitor } from '../commands/console/sessions.js';
import type { Permission, Role } from '../domain/access.js';

interface Rule {
  permissions?: readonly Permission[];
  /** Any of these roles; every role when not given. */
  roles?: readonly Role[];
}

const BUILDERS: readonly Role[] = ['owner', 'admin', 'developer'];
const ADMINS: readonly Role[] = ['owner', 'admin'];

export const RULES = {
  'dashboard.view': { permissions: ['reports.read'] },
  'batches.view': { permissions: ['campaigns.read'] },
  'campaigns.create': { permissions: ['campaigns.read'], roles: BUILDERS },
  /** Whoever may send from the console may stop a send (scheduled, or still sending). */
  'campaigns.cancel': { permissions: ['campaigns.read'], roles: BUILDERS },
  /** Recipient numbers in full on a batch's report; masked to the last four digits otherwise. */
  'recipients.view': { permissions: ['campaigns.read', 'recipients.read'] },
  'quick_send.send': { permissions: ['campaigns.read'], roles: BUILDERS },
  /** Messaging → Inbox: recipients' replies, numbers masked unless `inbox.numbers`. */
  'inbox.view': { permissions: ['messages.read'] },
  'inbox.numbers': { permissions: ['messages.read', 'recipients.read'] },
  /** The workspace's HELP answer goes out to anyone who asks: an owner's or admin's to set. */
  'inbox.manage': { permissions: ['messages.read'], roles: ADMINS },
  /** Messaging → Opt-outs: who opted out and how, numbers masked unless `recipients.view`. */
  'opt_outs.view': { permissions: ['campaigns.read'] },
  /** Undoing an opt-out sends marketing to that person again: an owner's or admin's call. */
  'opt_outs.undo': { permissions: ['campaigns.read'], roles: ADMINS },
  'api_keys.view': { permissions: ['developer_tools.read'] },
  'api_keys.manage': { permissions: ['developer_tools.read'], roles: BUILDERS },
  /** Anyone who sees the page may revoke their own connections; these, anyone's. */
  'mcp_connections.view': { permissions: ['developer_tools.read'] },
  'mcp_connections.revoke_any': { permissions: ['developer_tools.read'], roles: ADMINS },
  'webhooks.view': { permissions: ['developer_tools.read'] },
  'webhooks.manage': { permissions: ['developer_tools.read'], roles: BUILDERS },
  'otp_services.view': { permissions: ['developer_tools.read'] },
  'otp_services.manage': { permissions: ['developer_tools.read'], roles: BUILDERS },
  /** OTP activity's recipient numbers in full; masked to the last four digits otherwise. */
  'otp_activity.numbers': { permissions: ['developer_tools.read', 'recipients.read'] },
  /**
   * Workspace → Fraud guard: its limits are what the API answers 429 and 422 with, so whoever
   * builds against the API may read them; loosening them or lifting a block spends the
   * workspace's money, so changes are an owner's or admin's.
   */
  'fraud_guard.view': { permissions: ['developer_tools.read'] },
  'fraud_guard.manage': { permissions: ['developer_tools.read'], roles: ADMINS },
  /**
   * Workspace → Providers and Failover routes. Which providers exist and how routes order them
   * is what API keys and sends are routed by, so whoever builds against the API may read it; a
   * provider holds the workspace's vendor credentials and spends its money at the vendor, and a
   * route decides where every message it carries goes, so changes are an owner's or admin's (the
   * CLI's provider and route commands are the operator's).
   */
  'providers.view': { permissions: ['developer_tools.read'] },
  'providers.manage': { permissions: ['developer_tools.read'], roles: ADMINS },
  'audit.view': { roles: ADMINS },
  'team.view': { permissions: ['members.read'] },
  'team.manage': { permissions: ['members.read'], roles: ADMINS },
  'security.manage': { roles: ['owner'] },
  /** Workspace → Settings (quiet hours for marketing): what every marketing send waits for. */
  'settings.manage': { roles: ADMINS },
  /** Erasing a person's number everywhere in the workspace (commands/messaging/recipient-erasure.ts). */
  'recipients.erase': { roles: ['owner'] },
} as const satisfies Record<string, Rule>;

export type Action = keyof typeof RULES;

export function can(visitor: ConsoleVisitor, action: Action): boolean {
  if (visitor.status !== 'active' || visitor.role === null) return false;
  const rule: Rule = RULES[action];
  if (rule.roles && !rule.roles.includes(visitor.role)) return false;
  return (rule.permissions ?? []).every((permission) => visitor.permissions.includes(permission));
}

/** Why the action is refused, in words for the refusal page. */
export function refusal(action: Action): string {
  const rule: Rule = RULES[action];
  const parts = [
    rule.permissions?.length ? `the ${rule.permissions.join(' and ')} permission` : '',
    rule.roles ? `the ${rule.roles.join(' or ')} role` : '',
  ].filter(Boolean);
  return `This needs ${parts.join(' and ')} in this workspace. Ask an owner or admin of the workspace if you need it.`;
}
