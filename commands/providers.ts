/** A workspace's SMS providers: created with their settings and credentials, enabled, disabled. */
import { findProvider } from '../db/providers.js';
import type { Workspace } from '../db/workspaces.js';
import { OWN_PROVIDER_SLUG } from '../providers/registry.js';
import type { CommandDeps } from './deps.js';
import { type FieldRef, invalid } from './input.js';

/**
 * `own` or a provider of the workspace, named by `field` of the caller's input: enabled, unless
 * `mayBeDisabled` (a disabled provider's senders may be registered before it is enabled again).
 */
export async function checkProvider(
  deps: Pick<CommandDeps, 'sql'>,
  workspace: Workspace,
  slug: string,
  field: FieldRef,
  { mayBeDisabled = false } = {},
): Promise<void> {
  if (slug === OWN_PROVIDER_SLUG) return;
  const provider = await findProvider(deps.sql, workspace.id, slug);
  if (!provider) throw invalid`${field} "${slug}" is not a provider of ${workspace.slug}`;
  if (!provider.active && !mayBeDisabled)
    throw invalid`${field} "${slug}" is disabled in ${workspace.slug}`;
}
