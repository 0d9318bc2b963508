/** MCP connections (docs/spec.md §5.2.6): list them, revoke one with its access and refresh tokens. */
import {
  type ConnectionListing,
  listConnections,
  revokeConnection,
} from '../../db/oauth-connections.js';
import { findUserByEmail } from '../../db/users.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { conflict, notFound, optionalText } from '../input.js';
import { findWorkspace } from './workspaces.js';

/** Every connection, revoked ones included, oldest first; optionally one workspace's or user's. */
export async function listMcpConnections(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string; user?: string },
): Promise<ConnectionListing[]> {
  const slug = optionalText(input.workspace);
  const email = optionalText(input.user);
  const workspace = slug === undefined ? undefined : await findWorkspace(deps, slug);
  const user = email === undefined ? undefined : await findUserByEmail(deps.sql, email);
  if (email !== undefined && !user) throw notFound`No user has the email "${email}"`;
  return listConnections(deps.sql, {
    ...(workspace && { workspaceId: workspace.id }),
    ...(user && { userId: user.id }),
  });
}

/** Its access and refresh tokens stop working at once. */
export async function revokeMcpConnection(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number },
  actor: Actor,
): Promise<void> {
  const outcome = await revokeConnection(deps.sql, input.id, (tx, revoked) =>
    writeAudit(tx, actor, revoked.workspaceId, {
      action: 'mcp_connection.revoked',
      target: `connection #${input.id} (${revoked.clientName})`,
      details: { user: revoked.user },
    }),
  );
  if (outcome === 'not_found') throw notFound`No MCP connection has the id ${input.id}`;
  if (outcome === 'already_revoked') throw conflict`MCP connection ${input.id} is already revoked`;
}
