/** The routing a form may offer: `own`, the workspace's providers and its failover routes. */
import {
  type FailoverRouteChoice,
  listFailoverRouteChoices,
  listProviderChoices,
  type ProviderChoice,
} from '../../db/routing-choices.js';
import type { CommandDeps } from '../deps.js';
import { findWorkspace } from '../team/workspaces.js';

export interface RoutingChoices {
  /** The workspace's providers, disabled ones included (marked): `own` is not among them. */
  providers: ProviderChoice[];
  failoverRoutes: FailoverRouteChoice[];
}

export async function listRoutingChoices(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<RoutingChoices> {
  const workspace = await findWorkspace(deps, input.workspace);
  const [providers, failoverRoutes] = await Promise.all([
    listProviderChoices(deps.sql, workspace.id),
    listFailoverRouteChoices(deps.sql, workspace.id),
  ]);
  return { providers, failoverRoutes };
}
