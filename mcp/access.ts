import type { Sql } from '../db/client.js';
import { findMemberAccess } from '../db/member-access.js';
import { type Permission, secondFactorMissing } from '../domain/access.js';
import type { ToolCaller } from './tools/tool.js';

/** Every tool needs Developer Tools read (docs/spec.md §5.2 item 5). */
const ALWAYS_REQUIRED: Permission = 'developer_tools.read';

/**
 * Why the caller may not run a tool now, or undefined when it may. Read live on every call: the
 * user's membership, their current permissions, the workspace's API entitlement and whether it
 * requires a second factor the user has not set up (as the console refuses them).
 */
export async function accessProblem(
  sql: Sql,
  caller: ToolCaller,
  required: readonly Permission[],
): Promise<string | undefined> {
  const access = await findMemberAccess(sql, caller.workspaceId, caller.userId);
  if (!access || access.status === null) {
    return 'Insufficient access: you are no longer a member of this workspace.';
  }
  if (access.status !== 'active') {
    return 'Insufficient access: your membership of this workspace is suspended.';
  }
  if (!access.apiEnabled) {
    return 'Insufficient access: this workspace does not include API access.';
  }
  if (secondFactorMissing(access)) {
    return 'Insufficient access: this workspace requires two-step verification, which you have not set up. Set it up in the Herald console (Profile).';
  }
  const missing = [ALWAYS_REQUIRED, ...required].filter(
    (permission) => !access.permissions.includes(permission),
  );
  if (missing.length > 0) {
    return `Insufficient access: this tool needs the ${missing.join(' and ')} permission${missing.length > 1 ? 's' : ''} in this workspace.`;
  }
  return undefined;
}
