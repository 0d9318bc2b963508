/** API keys: issued with abilities and optional routing (the token shown once), revoked by id. */
import {
  type ApiKeyListing,
  insertApiKey,
  listApiKeys,
  revokeApiKey as revokeApiKeyRow,
} from '../db/api-keys.js';
import { findMemberUserId } from '../db/users.js';
import { ABILITIES, type Ability, isAbility } from '../domain/access.js';
import { issueApiKeyToken, keyedHash } from '../security/tokens.js';
import type { CommandDeps } from './deps.js';
import { checkFailoverRoute } from './failover-routes.js';
import { fieldsOf, invalid, notFound, optionalText } from './input.js';
import { checkProvider } from './providers.js';
import { findWorkspace } from './workspaces.js';

export type { ApiKeyListing };

export interface CreateApiKeyInput {
  workspace?: string;
  abilities?: string[];
  /** Sends with the key go through this provider (`own` included)... */
  provider?: string;
  /** ...or this failover route; neither: the request's choice, else `own`. */
  failoverRoute?: string;
  /** A member's email: the key acts for them. */
  user?: string;
  name?: string;
}

export interface CreatedApiKey {
  id: number;
  /** The secret: shown once, stored only as a keyed hash. */
  token: string;
  prefix: string;
  abilities: Ability[];
}

export async function createApiKey(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: CreateApiKeyInput,
): Promise<CreatedApiKey> {
  const field = fieldsOf<CreateApiKeyInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  if (input.abilities === undefined) throw invalid`${field('abilities')} is required`;
  const abilities = [...new Set(input.abilities.map((item) => item.trim()).filter(Boolean))];
  const unknown = abilities.filter((ability) => !isAbility(ability));
  if (abilities.length === 0 || unknown.length > 0) {
    throw invalid`${field('abilities')} must be a comma-separated list of ${ABILITIES.join(', ')}${
      unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''
    }`;
  }
  const provider = optionalText(input.provider);
  const failoverRoute = optionalText(input.failoverRoute);
  if (provider && failoverRoute)
    throw invalid`${field('provider')} and ${field('failoverRoute')} are exclusive`;
  // Sends with the key would all be refused (422), so refuse the key instead.
  if (provider) await checkProvider(deps, workspace, provider, field('provider'));
  if (failoverRoute)
    await checkFailoverRoute(deps, workspace, failoverRoute, field('failoverRoute'));
  const email = optionalText(input.user);
  const userId = email ? await findMemberUserId(deps.sql, workspace.id, email) : null;
  if (email && userId === undefined) throw invalid`${email} is not a member of ${workspace.slug}`;
  const { token, prefix } = issueApiKeyToken();
  const { id } = await insertApiKey(deps.sql, {
    workspaceId: workspace.id,
    userId: userId ?? null,
    name: optionalText(input.name) ?? null,
    prefix,
    tokenHash: keyedHash(deps.secret, 'api-key-hash', token),
    abilities: abilities.filter(isAbility),
    routingType: provider ? 'direct' : failoverRoute ? 'failover' : null,
    providerSlug: provider ?? null,
    failoverRouteSlug: failoverRoute ?? null,
  });
  return { id, token, prefix, abilities: abilities.filter(isAbility) };
}

/** The workspace's keys (prefix, abilities, routing, dates; never a token), live ones first. */
export async function listWorkspaceApiKeys(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<ApiKeyListing[]> {
  const workspace = await findWorkspace(deps, input.workspace);
  return listApiKeys(deps.sql, workspace.id);
}

/**
 * `false` when the key was already revoked (revoking is idempotent). Given a `workspace`, a key
 * of another workspace is not found.
 */
export async function revokeApiKey(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number; workspace?: string },
): Promise<{ id: number; newlyRevoked: boolean }> {
  const workspaceId =
    input.workspace === undefined ? undefined : (await findWorkspace(deps, input.workspace)).id;
  const outcome = await revokeApiKeyRow(deps.sql, input.id, workspaceId);
  if (outcome === 'not_found') throw notFound`No API key has the id ${input.id}`;
  return { id: input.id, newlyRevoked: outcome === 'revoked' };
}
