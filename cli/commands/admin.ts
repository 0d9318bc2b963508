import { z } from 'zod';
import { insertApiKey, revokeApiKey } from '../../db/api-keys.js';
import { findFailoverRoute, findProvider } from '../../db/providers.js';
import { findMemberUserId, upsertMember } from '../../db/users.js';
import {
  findWorkspaceBySlug,
  insertWorkspace,
  updateWorkspace,
  type Workspace,
} from '../../db/workspaces.js';
import { ABILITIES, isAbility, isRole, ROLE_PERMISSIONS, ROLES } from '../../domain/access.js';
import { characters } from '../../domain/validation.js';
import { OWN_PROVIDER_SLUG } from '../../providers/registry.js';
import { hashPassword } from '../../security/password.js';
import { issueApiKeyToken, keyedHash } from '../../security/tokens.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';

export type Options = Record<string, string | boolean | undefined>;

export interface CommandResult {
  json: Record<string, unknown>;
  human: string;
}

export function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${name} is required`);
  return value.trim();
}

export function optional(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

export async function workspaceBySlug(context: AdminContext, slug: string) {
  const workspace = await findWorkspaceBySlug(context.sql, slug);
  if (!workspace) throw new UsageError(`No workspace has the slug "${slug}"`);
  return workspace;
}

export async function workspaceCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const name = required(options, 'name');
  if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
  const slug = optional(options, 'slug') ?? slugify(name);
  if (!SLUG.test(slug)) {
    throw new UsageError(
      `--slug "${slug}" must be 1-63 lowercase letters, digits or hyphens, starting and ending with a letter or digit`,
    );
  }
  try {
    const workspace = await insertWorkspace(context.sql, { slug, name });
    return {
      json: { id: workspace.id, slug: workspace.slug },
      human: `Created workspace ${workspace.slug} (id ${workspace.id})`,
    };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new UsageError(`A workspace with the slug "${slug}" already exists`);
    throw error;
  }
}

/** herald workspace update --slug <slug> [--name <name>] [--api-enabled true|false] */
export async function workspaceUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const slug = required(options, 'slug');
  const name = optional(options, 'name');
  if (name !== undefined && characters(name) > 200)
    throw new UsageError('--name must be at most 200 characters');
  const flag = optional(options, 'api-enabled');
  if (flag !== undefined && flag !== 'true' && flag !== 'false')
    throw new UsageError(`--api-enabled must be true or false, not "${flag}"`);
  if (name === undefined && flag === undefined)
    throw new UsageError('Give at least one of --name, --api-enabled');
  const workspace = await updateWorkspace(context.sql, slug, {
    ...(name === undefined ? {} : { name }),
    ...(flag === undefined ? {} : { apiEnabled: flag === 'true' }),
  });
  if (!workspace) throw new UsageError(`No workspace has the slug "${slug}"`);
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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const email = required(options, 'email');
  if (!z.email().safeParse(email).success)
    throw new UsageError(`--email "${email}" is not an email address`);
  const password = required(options, 'password');
  if (password.length < 8) throw new UsageError('--password must be at least 8 characters');
  const role = optional(options, 'role') ?? 'developer';
  if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const { userId, created } = await upsertMember(context.sql, {
    workspaceId: workspace.id,
    email,
    passwordHash: await hashPassword(password),
    role,
    permissions: ROLE_PERMISSIONS[role],
  });
  if (!created) throw new UsageError(`${email} is already a member of ${workspace.slug}`);
  return {
    json: { id: userId },
    human: `Added ${email} to ${workspace.slug} as ${role} (user id ${userId})`,
  };
}

function parseAbilities(list: string): (typeof ABILITIES)[number][] {
  const abilities = [
    ...new Set(
      list
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = abilities.filter((ability) => !isAbility(ability));
  if (abilities.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--abilities must be a comma-separated list of ${ABILITIES.join(', ')}` +
        (unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''),
    );
  }
  return abilities.filter(isAbility);
}

export async function keyCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const abilities = parseAbilities(required(options, 'abilities'));
  const provider = optional(options, 'provider');
  const failoverRoute = optional(options, 'failover-route');
  if (provider && failoverRoute)
    throw new UsageError('--provider and --failover-route are exclusive');
  // Sends with the key would all be refused (422), so refuse the key instead.
  if (provider) await checkProviderOption(context, workspace, provider);
  if (failoverRoute) await checkFailoverRouteOption(context, workspace, failoverRoute);
  const email = optional(options, 'user');
  const userId = email ? await findMemberUserId(context.sql, workspace.id, email) : null;
  if (email && userId === undefined)
    throw new UsageError(`${email} is not a member of ${workspace.slug}`);
  const { token, prefix } = issueApiKeyToken();
  const { id } = await insertApiKey(context.sql, {
    workspaceId: workspace.id,
    userId: userId ?? null,
    name: optional(options, 'name') ?? null,
    prefix,
    tokenHash: keyedHash(context.secret, 'api-key-hash', token),
    abilities,
    routingType: provider ? 'direct' : failoverRoute ? 'failover' : null,
    providerSlug: provider ?? null,
    failoverRouteSlug: failoverRoute ?? null,
  });
  return {
    json: { id, token, prefix, abilities },
    human: `Created API key ${id} (${prefix}) with ${abilities.join(', ')}.\nToken (shown once): ${token}`,
  };
}

/** `--provider`: `own`, or a provider of the workspace (enabled, unless `mayBeDisabled`). */
export async function checkProviderOption(
  context: AdminContext,
  workspace: Workspace,
  slug: string,
  { mayBeDisabled = false } = {},
) {
  if (slug === OWN_PROVIDER_SLUG) return;
  const provider = await findProvider(context.sql, workspace.id, slug);
  if (!provider)
    throw new UsageError(`--provider "${slug}" is not a provider of ${workspace.slug}`);
  if (!provider.active && !mayBeDisabled)
    throw new UsageError(`--provider "${slug}" is disabled in ${workspace.slug}`);
}

/** `--failover-route`: an enabled failover route of the workspace. */
export async function checkFailoverRouteOption(
  context: AdminContext,
  workspace: Workspace,
  slug: string,
) {
  const route = await findFailoverRoute(context.sql, workspace.id, slug);
  if (!route)
    throw new UsageError(`--failover-route "${slug}" is not a failover route of ${workspace.slug}`);
  if (!route.enabled)
    throw new UsageError(`--failover-route "${slug}" is disabled in ${workspace.slug}`);
}

export const RESOURCE_SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A required option naming a provider, route or template by its slug. */
export function slugOption(options: Options, name = 'slug'): string {
  const slug = required(options, name);
  if (!RESOURCE_SLUG.test(slug)) {
    throw new UsageError(
      `--${name} "${slug}" must be lowercase letters, digits, - or _ (at most 63)`,
    );
  }
  return slug;
}

/** `--id` of a record (`what`: "key", "invitation", ...): a positive integer. */
export function idOption(options: Options, what: string): number {
  const raw = required(options, 'id');
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id <= 0)
    throw new UsageError(`--id "${raw}" is not ${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} id`);
  return id;
}

export async function keyRevoke(context: AdminContext, options: Options): Promise<CommandResult> {
  const id = idOption(options, 'key');
  const outcome = await revokeApiKey(context.sql, id);
  if (outcome === 'not_found') throw new UsageError(`No API key has the id ${id}`);
  return {
    json: { id, revoked: true },
    human: outcome === 'revoked' ? `Revoked API key ${id}` : `API key ${id} was already revoked`,
  };
}
