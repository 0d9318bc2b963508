import { z } from 'zod';
import {
  findProviders,
  insertFailoverRoute,
  insertProvider,
  setProviderActive,
} from '../../db/providers.js';
import { OWN_PROVIDER_SLUG } from '../../providers/registry.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import {
  type CommandResult,
  isUniqueViolation,
  type Options,
  optional,
  required,
  slugOption,
  workspaceBySlug,
} from './admin.js';

const PROVIDER_TYPES = ['simulator'] as const;

export async function providerCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = slugOption(options);
  if (slug === OWN_PROVIDER_SLUG)
    throw new UsageError('"own" is the operator\'s provider and is reserved');
  const type = required(options, 'type');
  if (!(PROVIDER_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`--type must be one of ${PROVIDER_TYPES.join(', ')}`);
  }
  const baseUrl = required(options, 'base-url');
  if (!z.url({ protocol: /^https?$/ }).safeParse(baseUrl).success) {
    throw new UsageError(`--base-url "${baseUrl}" is not an http(s) URL`);
  }
  try {
    const { id } = await insertProvider(context.sql, {
      workspaceId: workspace.id,
      slug,
      name: optional(options, 'name') ?? slug,
      type: 'simulator',
      requiresSenderId: options['requires-sender-id'] === true,
      settings: { base_url: baseUrl },
    });
    return {
      json: { id, slug },
      human: `Created provider ${slug} (id ${id}) in ${workspace.slug}`,
    };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new UsageError(`${workspace.slug} already has a provider "${slug}"`);
    throw error;
  }
}

async function providerSetActive(context: AdminContext, options: Options, active: boolean) {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = slugOption(options);
  if (!(await setProviderActive(context.sql, workspace.id, slug, active))) {
    throw new UsageError(`${workspace.slug} has no provider "${slug}"`);
  }
  return {
    json: { slug, active },
    human: `Provider ${slug} is now ${active ? 'active' : 'inactive'}`,
  };
}

export const providerEnable = (context: AdminContext, options: Options) =>
  providerSetActive(context, options, true);
export const providerDisable = (context: AdminContext, options: Options) =>
  providerSetActive(context, options, false);

export async function routeCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = slugOption(options);
  const providerSlugs = required(options, 'providers')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (
    providerSlugs.length < 1 ||
    providerSlugs.length > 5 ||
    new Set(providerSlugs).size !== providerSlugs.length
  ) {
    throw new UsageError('--providers must list 1 to 5 distinct provider slugs, in failover order');
  }
  const known = new Set(
    (await findProviders(context.sql, workspace.id, providerSlugs)).map(
      (provider) => provider.slug,
    ),
  );
  const unknown = providerSlugs.filter((item) => item !== OWN_PROVIDER_SLUG && !known.has(item));
  if (unknown.length > 0)
    throw new UsageError(`${workspace.slug} has no provider ${unknown.join(', ')}`);
  try {
    const { id } = await insertFailoverRoute(context.sql, {
      workspaceId: workspace.id,
      slug,
      name: optional(options, 'name') ?? slug,
      providerSlugs,
    });
    return {
      json: { id, slug, providers: providerSlugs },
      human: `Created failover route ${slug} (id ${id}): ${providerSlugs.join(' → ')}`,
    };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new UsageError(`${workspace.slug} already has a route "${slug}"`);
    throw error;
  }
}
