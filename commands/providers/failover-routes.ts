/** Failover routes: an ordered list of a workspace's providers, tried in turn. */
import {
  type FailoverRouteListing,
  findFailoverRoute,
  findProviders,
  insertFailoverRoute,
  listFailoverRoutes,
} from '../../db/providers.js';
import type { Workspace } from '../../db/workspaces.js';
import { OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  type FieldRef,
  fieldsOf,
  invalid,
  isUniqueViolation,
  optionalText,
  requiredText,
  resourceSlug,
} from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

const MAX_PROVIDERS = 5;

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

/** The workspace's failover routes, by slug. */
export async function listWorkspaceFailoverRoutes(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<{ routes: FailoverRouteListing[]; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  return { routes: await listFailoverRoutes(deps.sql, workspace.id), workspace };
}

export interface CreateFailoverRouteInput {
  workspace?: string;
  slug?: string;
  /** The slug when not given. */
  name?: string;
  /** 1 to 5 distinct provider slugs (`own` included), in the order they are tried. */
  providers?: string[];
}

export async function createFailoverRoute(
  deps: Pick<CommandDeps, 'sql'>,
  input: CreateFailoverRouteInput,
): Promise<{ id: number; slug: string; providerSlugs: string[] }> {
  const field = fieldsOf<CreateFailoverRouteInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  if (input.providers === undefined) throw invalid`${field('providers')} is required`;
  const providerSlugs = input.providers.map((item) => item.trim()).filter(Boolean);
  if (
    providerSlugs.length < 1 ||
    providerSlugs.length > MAX_PROVIDERS ||
    new Set(providerSlugs).size !== providerSlugs.length
  ) {
    throw invalid`${field('providers')} must list 1 to ${MAX_PROVIDERS} distinct provider slugs, in failover order`;
  }
  const known = new Set(
    (await findProviders(deps.sql, workspace.id, providerSlugs)).map((provider) => provider.slug),
  );
  const unknown = providerSlugs.filter((item) => item !== OWN_PROVIDER_SLUG && !known.has(item));
  if (unknown.length > 0) throw invalid`${workspace.slug} has no provider ${unknown.join(', ')}`;
  try {
    const { id } = await insertFailoverRoute(deps.sql, {
      workspaceId: workspace.id,
      slug,
      name: optionalText(input.name) ?? slug,
      providerSlugs,
    });
    return { id, slug, providerSlugs };
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict`${workspace.slug} already has a route "${slug}"`;
    throw error;
  }
}
