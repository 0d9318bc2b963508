/** herald mcp connections list|revoke: options in, use-case, output. */
import { listMcpConnections, revokeMcpConnection } from '../../commands/team/mcp-connections.js';
import { type AdminContext, operatorActor } from '../context.js';
import { type CommandResult, idOption, type Options, run, text } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** herald mcp connections list [--workspace <slug>] [--user <email>] → {"connections": [...]} */
export async function connectionsList(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const listed = await run(
    listMcpConnections(context, {
      workspace: text(options, 'workspace'),
      user: text(options, 'user'),
    }),
  );
  const connections = listed.map((connection) => ({
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
  await run(revokeMcpConnection(context, { id }, operatorActor()));
  return {
    json: { revoked: true },
    human: `Revoked MCP connection ${id} and its access and refresh tokens`,
  };
}

export const MCP_COMMANDS: AdminCommand[] = [
  {
    name: 'mcp connections list',
    run: connectionsList,
    synopses: [[[optional('workspace', '<slug>'), optional('user', '<email>')]]],
  },
  {
    name: 'mcp connections revoke',
    run: connectionsRevoke,
    synopses: [[[required('id', '<id>')]]],
  },
];
