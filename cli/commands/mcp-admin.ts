/** MCP connections (SPEC §5.2.6): list them, revoke one with its access and refresh tokens. */
import { listConnections, revokeConnection } from '../../db/oauth-connections.js';
import { findUserByEmail } from '../../db/users.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import { type CommandResult, idOption, type Options, optional, workspaceBySlug } from './admin.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** herald mcp connections list [--workspace <slug>] [--user <email>] → {"connections": [...]} */
export async function connectionsList(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const slug = optional(options, 'workspace');
  const email = optional(options, 'user');
  const workspace = slug === undefined ? undefined : await workspaceBySlug(context, slug);
  const user = email === undefined ? undefined : await findUserByEmail(context.sql, email);
  if (email !== undefined && !user) throw new UsageError(`No user has the email "${email}"`);
  const connections = (
    await listConnections(context.sql, {
      ...(workspace && { workspaceId: workspace.id }),
      ...(user && { userId: user.id }),
    })
  ).map((connection) => ({
    id: connection.id,
    workspace: connection.workspace,
    user: connection.user,
    client_id: connection.clientId,
    client_name: connection.clientName,
    scope: connection.scope,
    created_at: iso(connection.createdAt),
    last_used_at: iso(connection.lastUsedAt),
    revoked_at: iso(connection.revokedAt),
  }));
  return {
    json: { connections },
    human: connections.length
      ? connections
          .map(
            (connection) =>
              `${connection.id}  ${connection.workspace}  ${connection.user}  ${connection.client_name} (${connection.client_id})  ` +
              (connection.revoked_at
                ? `revoked ${connection.revoked_at}`
                : `last used ${connection.last_used_at ?? 'never'}`),
          )
          .join('\n')
      : 'No MCP connections',
  };
}

/** herald mcp connections revoke --id <id> → {"revoked": true}; its tokens stop working at once. */
export async function connectionsRevoke(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'connection');
  const outcome = await revokeConnection(context.sql, id);
  if (outcome === 'not_found') throw new UsageError(`No MCP connection has the id ${id}`);
  if (outcome === 'already_revoked')
    throw new UsageError(`MCP connection ${id} is already revoked`);
  return {
    json: { revoked: true },
    human: `Revoked MCP connection ${id} and its access and refresh tokens`,
  };
}
