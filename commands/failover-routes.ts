/** Failover routes: an ordered list of a workspace's providers, tried in turn. */
import { findFailoverRoute } from '../db/providers.js';
import type { Workspace } from '../db/workspaces.js';
import type { CommandDeps } from './deps.js';
import { type FieldRef, invalid } from './input.js';

/** An enabled failover route of the workspace, named by `field` of the caller's input. */
export async function checkFailoverRoute(
  deps: Pick<CommandDeps, 'sql'>,
  workspace: Workspace,
  slug: string,
  field: FieldRef,
): Promise<void> {
  const route = await findFailoverRoute(deps.sql, workspace.id, slug);
  if (!route) throw invalid`${field} "${slug}" is not a failover route of ${workspace.slug}`;
  if (!route.enabled) throw invalid`${field} "${slug}" is disabled in ${workspace.slug}`;
}
