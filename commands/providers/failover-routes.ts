/**
 * Failover routes: an ordered list of a workspace's providers, tried in turn. Created, edited and
 * deleted with their audit line in the change's transaction.
 */
import {
  deleteFailoverRoute as deleteFailoverRouteRow,
  type FailoverRouteListing,
  findFailoverRoute,
  findKeysRoutedTo,
  findProviders,
  insertFailoverRoute,
  listFailoverRoutes,
  updateFailoverRoute as updateFailoverRouteRow,
} from '../../db/providers.js';
import type { Workspace } from '../../db/workspaces.js';
import { OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  type FieldRef,
  fieldsOf,
  invalid,
  isUniqueViolation,
  notFound,
  optionalText,
  refuseAll,
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

type Deps = Pick<CommandDeps, 'sql'>;

/** The providers as given, checked: 1 to 5 distinct slugs, each `own` or the workspace's. */
async function checkedProviders(
  deps: Deps,
  workspace: Workspace,
  providers: string[] | undefined,
): Promise<string[]> {
  const field = fieldsOf<CreateFailoverRouteInput>();
  if (providers === undefined) throw invalid`${field('providers')} is required`;
  const providerSlugs = providers.map((item) => item.trim()).filter(Boolean);
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
  return providerSlugs;
}

/** Its slug and providers, each refused on its own (a form shows both at once). */
async function checkedRoute(deps: Deps, workspace: Workspace, input: CreateFailoverRouteInput) {
  const field = fieldsOf<CreateFailoverRouteInput>();
  const refusals = refuseAll();
  const slug = refusals.check(() =>
    resourceSlug(requiredText(input.slug, field('slug')), field('slug')),
  );
  const providerSlugs = await refusals.checkAsync(() =>
    checkedProviders(deps, workspace, input.providers),
  );
  refusals.done();
  return { slug: slug as string, providerSlugs: providerSlugs as string[] };
}

/** Audited as `failover_route.created` with its providers in order. */
export async function createFailoverRoute(
  deps: Deps,
  actor: Actor,
  input: CreateFailoverRouteInput,
): Promise<{ id: number; slug: string; providerSlugs: string[] }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const { slug, providerSlugs } = await checkedRoute(deps, workspace, input);
  try {
    const { id } = await deps.sql.begin(async (tx) => {
      const created = await insertFailoverRoute(tx, {
        workspaceId: workspace.id,
        slug,
        name: optionalText(input.name) ?? slug,
        providerSlugs,
      });
      await writeAudit(tx, actor, workspace.id, {
        action: 'failover_route.created',
        target: `failover route ${slug}`,
        details: { providers: providerSlugs.join(',') },
      });
      return created;
    });
    return { id, slug, providerSlugs };
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict`${workspace.slug} already has a route "${slug}"`;
    throw error;
  }
}

/**
 * A route's new name and provider order (its slug stays: API keys name it). Audited as
 * `failover_route.updated` with its providers in order.
 */
export async function updateFailoverRoute(
  deps: Deps,
  actor: Actor,
  input: CreateFailoverRouteInput,
): Promise<{ slug: string; providerSlugs: string[] }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const { slug, providerSlugs } = await checkedRoute(deps, workspace, input);
  const changed = await deps.sql.begin(async (tx) => {
    const changed = await updateFailoverRouteRow(tx, {
      workspaceId: workspace.id,
      slug,
      name: optionalText(input.name) ?? slug,
      providerSlugs,
    });
    if (changed)
      await writeAudit(tx, actor, workspace.id, {
        action: 'failover_route.updated',
        target: `failover route ${slug}`,
        details: { providers: providerSlugs.join(',') },
      });
    return changed;
  });
  if (!changed) throw notFound`${workspace.slug} has no failover route "${slug}"`;
  return { slug, providerSlugs };
}

/**
 * Deletes a route no live API key sends through (those keys would have nowhere to send).
 * Audited as `failover_route.deleted`.
 */
export async function deleteFailoverRoute(
  deps: Deps,
  actor: Actor,
  input: { workspace?: string; slug?: string },
): Promise<{ slug: string }> {
  const field = fieldsOf<CreateFailoverRouteInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  const deleted = await deps.sql.begin(async (tx) => {
    const keys = await findKeysRoutedTo(tx, workspace.id, slug);
    if (keys.length > 0)
      throw conflict`API key${keys.length === 1 ? '' : 's'} ${keys.join(', ')} send${keys.length === 1 ? 's' : ''} through "${slug}": revoke ${keys.length === 1 ? 'it' : 'them'} first`;
    const deleted = await deleteFailoverRouteRow(tx, workspace.id, slug);
    if (deleted)
      await writeAudit(tx, actor, workspace.id, {
        action: 'failover_route.deleted',
        target: `failover route ${slug}`,
        details: {},
      });
    return deleted;
  });
  if (!deleted) throw notFound`${workspace.slug} has no failover route "${slug}"`;
  return { slug };
}
