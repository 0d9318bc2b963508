/** herald workspace create|update, user create, key create|revoke: options in, use-case, output. */
import { createApiKey, revokeApiKey } from '../../commands/api-keys.js';
import { checkFailoverRoute } from '../../commands/failover-routes.js';
import { checkProvider } from '../../commands/providers.js';
import { addUser } from '../../commands/users.js';
import {
  createWorkspace,
  findWorkspace,
  updateWorkspaceSettings,
} from '../../commands/workspaces.js';
import type { Workspace } from '../../db/workspaces.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import {
  type CommandResult,
  idOption,
  list,
  type Options,
  optional,
  run,
  text,
} from './options.js';

export {
  type CommandResult,
  idOption,
  type Options,
  optional,
  required,
} from './options.js';

export async function workspaceCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await run(
    createWorkspace(context, { name: text(options, 'name'), slug: text(options, 'slug') }),
  );
  return {
    json: { id: workspace.id, slug: workspace.slug },
    human: `Created workspace ${workspace.slug} (id ${workspace.id})`,
  };
}

/** herald workspace update --slug <slug> [--name <name>] [--api-enabled true|false] */
export async function workspaceUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const flag = optional(options, 'api-enabled');
  if (flag !== undefined && flag !== 'true' && flag !== 'false')
    throw new UsageError(`--api-enabled must be true or false, not "${flag}"`);
  const workspace = await run(
    updateWorkspaceSettings(context, {
      slug: text(options, 'slug'),
      name: text(options, 'name'),
      apiEnabled: flag === undefined ? undefined : flag === 'true',
    }),
  );
  return {
    json: {
      id: workspace.id,
      slug: workspace.slug,
      name: workspace.name,
      api_enabled: workspace.apiEnabled,
    },
    human: `Updated workspace ${workspace.slug} (id ${workspace.id}): name "${workspace.name}", API ${workspace.apiEnabled ? 'enabled' : 'disabled'}`,
  };
}

export async function userCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { userId, email, role, workspace } = await run(
    addUser(context, {
      workspace: text(options, 'workspace'),
      email: text(options, 'email'),
      password: text(options, 'password'),
      role: text(options, 'role'),
    }),
  );
  return {
    json: { id: userId },
    human: `Added ${email} to ${workspace.slug} as ${role} (user id ${userId})`,
  };
}

export async function keyCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, token, prefix, abilities } = await run(
    createApiKey(context, {
      workspace: text(options, 'workspace'),
      abilities: list(options, 'abilities'),
      provider: text(options, 'provider'),
      failoverRoute: text(options, 'failover-route'),
      user: text(options, 'user'),
      name: text(options, 'name'),
    }),
  );
  return {
    json: { id, token, prefix, abilities },
    human: `Created API key ${id} (${prefix}) with ${abilities.join(', ')}.\nToken (shown once): ${token}`,
  };
}

export async function keyRevoke(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, newlyRevoked } = await run(revokeApiKey(context, { id: idOption(options, 'key') }));
  return {
    json: { id, revoked: true },
    human: newlyRevoked ? `Revoked API key ${id}` : `API key ${id} was already revoked`,
  };
}

// For `herald campaign`: the workspace and routing options, checked as every command checks them.

export const workspaceBySlug = (context: AdminContext, slug: string) =>
  run(findWorkspace(context, slug));

export const checkProviderOption = (
  context: AdminContext,
  workspace: Workspace,
  slug: string,
  { mayBeDisabled = false } = {},
) => run(checkProvider(context, workspace, slug, { field: 'provider' }, { mayBeDisabled }));

export const checkFailoverRouteOption = (
  context: AdminContext,
  workspace: Workspace,
  slug: string,
) => run(checkFailoverRoute(context, workspace, slug, { field: 'failoverRoute' }));
