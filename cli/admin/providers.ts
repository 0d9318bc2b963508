/**
 * herald provider create|list|enable|disable, route create|list: options in, use-case, output. Each
 * provider type's options and usage come from its definition (providers/<vendor>/definition.ts).
 */
import {
  createFailoverRoute,
  listWorkspaceFailoverRoutes,
} from '../../commands/providers/failover-routes.js';
import {
  createProvider,
  disableProvider,
  enableProvider,
  listWorkspaceProviders,
  type ProviderInput,
} from '../../commands/providers/providers.js';
import type { ProviderDefinition } from '../../domain/provider-definition.js';
import { PROVIDER_TYPES, withProviderTypes } from '../../server/provider-types.js';
import { type AdminContext, operatorActor } from '../context.js';
import { listing, tableTime } from '../output.js';
import {
  type CommandResult,
  list,
  type Options,
  optionOf,
  run,
  text,
  wholeNumber,
} from './options.js';
import {
  type AdminCommand,
  flag,
  type OptionSpec,
  optional,
  required,
  type Synopsis,
  text as usageText,
} from './table.js';

/** `accountSid` → `account-sid`. */
const optionName = (field: string) => optionOf(field).slice(2);

/** The type fields of every definition, each once (a base URL is several types'). */
const TYPE_FIELDS = [
  ...new Set(PROVIDER_TYPES.flatMap((type) => type.fields.map((field) => field.name))),
];

export async function providerCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, slug, type, workspace } = await run(
    createProvider(withProviderTypes(context), operatorActor(), {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      name: text(options, 'name'),
      type: text(options, 'type'),
      requiresSenderId: options['requires-sender-id'] === true,
      messagesPerSecond: wholeNumber(options, 'messages-per-second'),
      countries: list(options, 'countries'),
      fields: Object.fromEntries(
        TYPE_FIELDS.map((field) => [field, text(options, optionName(field))]),
      ),
    }),
  );
  return {
    json: { id, slug },
    human: `Created ${type} provider ${slug} (id ${id}) in ${workspace.slug}`,
  };
}

/**
 * herald provider list --workspace <slug> → {"providers": [...]}, by slug: never a provider's
 * settings or credentials. `own`, the operator's provider, is every workspace's and not listed.
 */
export async function providerList(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { providers, workspace } = await run(
    listWorkspaceProviders(context, { workspace: text(options, 'workspace') }),
  );
  return {
    json: {
      providers: providers.map((provider) => ({
        id: provider.id,
        slug: provider.slug,
        name: provider.name,
        type: provider.type,
        active: provider.active,
        requires_sender_id: provider.requiresSenderId,
        messages_per_second: provider.messagesPerSecond,
        created_at: provider.createdAt.toISOString(),
      })),
    },
    human: listing(
      providers,
      ['ID', 'SLUG', 'NAME', 'TYPE', 'STATUS', 'SENDER ID', 'MSG/S', 'CREATED (UTC)'],
      (provider) => [
        provider.id,
        provider.slug,
        provider.name,
        provider.type,
        provider.active ? 'active' : 'inactive',
        provider.requiresSenderId ? 'required' : 'optional',
        provider.messagesPerSecond,
        tableTime(provider.createdAt),
      ],
      `${workspace.slug} has no providers of its own (it sends through own)`,
    ),
  };
}

async function providerSetActive(context: AdminContext, options: Options, active: boolean) {
  const input: ProviderInput = {
    workspace: text(options, 'workspace'),
    slug: text(options, 'slug'),
  };
  const deps = withProviderTypes(context);
  const actor = operatorActor();
  const { slug } = await run(
    active ? enableProvider(deps, actor, input) : disableProvider(deps, actor, input),
  );
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
  const { id, slug, providerSlugs } = await run(
    createFailoverRoute(context, operatorActor(), {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      name: text(options, 'name'),
      providers: list(options, 'providers'),
    }),
  );
  return {
    json: { id, slug, providers: providerSlugs },
    human: `Created failover route ${slug} (id ${id}): ${providerSlugs.join(' → ')}`,
  };
}

/** herald route list --workspace <slug> → {"routes": [...]}, by slug */
export async function routeList(context: AdminContext, options: Options): Promise<CommandResult> {
  const { routes, workspace } = await run(
    listWorkspaceFailoverRoutes(context, { workspace: text(options, 'workspace') }),
  );
  return {
    json: {
      routes: routes.map((route) => ({
        id: route.id,
        slug: route.slug,
        name: route.name,
        enabled: route.enabled,
        providers: route.providerSlugs,
        created_at: route.createdAt.toISOString(),
      })),
    },
    human: listing(
      routes,
      ['ID', 'SLUG', 'NAME', 'STATUS', 'PROVIDERS (IN ORDER)', 'CREATED (UTC)'],
      (route) => [
        route.id,
        route.slug,
        route.name,
        route.enabled ? 'enabled' : 'disabled',
        route.providerSlugs.join(' → '),
        tableTime(route.createdAt),
      ],
      `${workspace.slug} has no failover routes`,
    ),
  };
}

/** The options every type's `provider create` takes, by the field a definition's usage names. */
const COMMON_OPTIONS: Record<string, OptionSpec> = {
  workspace: required('workspace', '<slug>'),
  slug: required('slug', '<slug>'),
  name: optional('name', '<name>'),
  requiresSenderId: flag('requires-sender-id'),
  messagesPerSecond: optional('messages-per-second', '<n>'),
  countries: optional('countries', '<AU,NZ,...>'),
};

/**
 * `provider create --type <type>` as its definition lays it out: a field by name, or a field and
 * how its value is shown (`messagesPerSecond <n, default 50>`).
 */
function createSynopsis(type: ProviderDefinition): Synopsis {
  const optionOfField = (entry: string): OptionSpec => {
    const [name = entry, value] = entry.split(/ (.*)/s);
    if (name === 'type') return required('type', type.type);
    const own = type.fields.find((field) => field.name === name);
    const option = own
      ? { name: optionName(own.name), value: own.value, required: own.required }
      : COMMON_OPTIONS[name];
    if (!option) throw new Error(`provider type ${type.type}: no option for usage field ${name}`);
    return value === undefined ? option : { ...option, value };
  };
  const lines = type.usage.lines.map((line) => line.map(optionOfField));
  return type.usage.note ? [...lines, [usageText(type.usage.note)]] : lines;
}

/** Shared by enable and disable: one usage line, `provider enable|disable`. */
const ENABLE_DISABLE: Synopsis[] = [
  [[required('workspace', '<slug>'), required('slug', '<slug>')]],
];

export const PROVIDER_COMMANDS: AdminCommand[] = [
  { name: 'provider create', run: providerCreate, synopses: PROVIDER_TYPES.map(createSynopsis) },
  { name: 'provider list', run: providerList, synopses: [[[required('workspace', '<slug>')]]] },
  { name: 'provider enable', run: providerEnable, synopses: ENABLE_DISABLE },
  { name: 'provider disable', run: providerDisable, synopses: ENABLE_DISABLE },
  {
    name: 'route create',
    run: routeCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('slug', '<slug>'),
          required('providers', '<a,b,...>'),
          optional('name', '<name>'),
        ],
      ],
    ],
  },
  { name: 'route list', run: routeList, synopses: [[[required('workspace', '<slug>')]]] },
];
