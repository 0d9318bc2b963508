/** API key abilities (docs/spec.md §5.1) and member permissions (docs/spec.md §5.2). */

export const ABILITIES = [
  'messages:send',
  'messages:read',
  'otp:send',
  'otp:verify',
  /** Full numbers in a campaign's recipient listing; without it they are masked (`•••• 1234`). */
  'recipients:read',
] as const;
export type Ability = (typeof ABILITIES)[number];

export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  'developer_tools.read',
  'campaigns.read',
  'messages.read',
  'reports.read',
  'members.read',
  /** Full recipient numbers on console reports; without it they are masked to the last four digits. */
  'recipients.read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const everything: readonly Permission[] = PERMISSIONS;

/** A member's permissions start from the role's set; an operator may narrow them afterwards. */
export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: everything,
  admin: everything,
  developer: ['developer_tools.read', 'campaigns.read', 'messages.read', 'reports.read'],
  viewer: ['campaigns.read', 'reports.read'],
};

export function isAbility(value: string): value is Ability {
  return (ABILITIES as readonly string[]).includes(value);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** A member's standing in a workspace, as far as what they may do goes. */
export interface Standing {
  role: Role;
  permissions: readonly Permission[];
  status: 'active' | 'suspended';
}

/**
 * Whether a member may invite someone with `role`: an active owner or admin who manages the team
 * (members.read), and only an owner invites an owner. An invitation stays valid only while its
 * inviter still may make it: a removal, suspension or demotion revokes the rest (db/members.ts).
 */
export function mayInvite(inviter: Standing, role: Role): boolean {
  return (
    inviter.status === 'active' &&
    (inviter.role === 'owner' || inviter.role === 'admin') &&
    inviter.permissions.includes('members.read') &&
    (role !== 'owner' || inviter.role === 'owner')
  );
}

/**
 * Whether a workspace's "two-step verification required" shuts this member out: it requires a
 * second factor and they have none. The console (console/guard.ts) and MCP (every tool call and
 * refresh, mcp/access.ts, mcp/oauth/token.ts) apply this one rule.
 */
export function secondFactorMissing(member: {
  requireSecondFactor: boolean;
  totpEnabled: boolean;
}): boolean {
  return member.requireSecondFactor && !member.totpEnabled;
}
