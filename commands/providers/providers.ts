/**
 * A workspace's SMS providers: created and edited with their settings and credentials (write-only),
 * tested, enabled, disabled. Every change writes its audit line in its own transaction.
 */
import type { Sql, TransactionSql } from '../../db/client.js';
import {
  findProvider,
  insertProvider,
  listProviders,
  lockSmscAccounts,
  type ProviderListing,
  type ProviderRecord,
  setProviderActive,
  updateProvider as updateProviderRow,
} from '../../db/providers.js';
import type { Workspace } from '../../db/workspaces.js';
import {
  type ConnectionTest,
  definitionOf,
  OWN_PROVIDER_SLUG,
  type StoredProvider,
  type WebhookParser,
} from '../../domain/provider-definition.js';
import {
  decryptCredentials,
  encryptCredentials,
  providerCredentialsContext,
} from '../../security/credentials.js';
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
import { type ProviderSettingsInput, providerConfig } from './provider-settings.js';
import { accountOfRecord, refuseSharedSmscAccount } from './smsc-accounts.js';

type Deps = Pick<CommandDeps, 'sql' | 'secret' | 'providerTypes'>;

const MAX_MESSAGES_PER_SECOND = 10_000;

export interface CreateProviderInput extends ProviderSettingsInput {
  workspace?: string;
  slug?: string;
  /** The slug when not given. */
  name?: string;
  type?: string;
  requiresSenderId?: boolean;
  /** The provider's throughput, shared by every worker; not given: the adapter's. */
  messagesPerSecond?: number;
}

/** The workspace's providers (never their settings or credentials), by slug. */
export async function listWorkspaceProviders(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<{ providers: ProviderListing[]; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  return { providers: await listProviders(deps.sql, workspace.id), workspace };
}

/** A whole number of messages per second from 1 to 10,000, or null (the adapter's). */
function checkedRate(messagesPerSecond: number | undefined): number | null {
  if (messagesPerSecond === undefined) return null;
  if (
    !(
      Number.isInteger(messagesPerSecond) &&
      messagesPerSecond >= 1 &&
      messagesPerSecond <= MAX_MESSAGES_PER_SECOND
    )
  )
    throw invalid`${fieldsOf<CreateProviderInput>()('messagesPerSecond')} must be a whole number from 1 to ${MAX_MESSAGES_PER_SECOND}`;
  return messagesPerSecond;
}

/** Audited as `provider.created` with its type; its settings and credentials never are. */
export async function createProvider(
  deps: Deps,
  actor: Actor,
  input: CreateProviderInput,
): Promise<{ id: number; slug: string; type: string; workspace: Workspace }> {
  const field = fieldsOf<CreateProviderInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const refusals = refuseAll();
  const slug = refusals.check(() => {
    const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
    if (slug === OWN_PROVIDER_SLUG) throw invalid`"own" is the operator's provider and is reserved`;
    return slug;
  });
  const definition = refusals.check(() => {
    const definition = definitionOf(deps.providerTypes, requiredText(input.type, field('type')));
    if (!definition)
      throw invalid`${field('type')} must be one of ${deps.providerTypes.map((each) => each.type).join(', ')}`;
    return definition;
  });
  const config =
    definition && refusals.check(() => providerConfig(input, definition, deps.providerTypes));
  const messagesPerSecond = refusals.check(() => checkedRate(input.messagesPerSecond));
  refusals.done();
  if (slug === undefined || definition === undefined || config === undefined)
    throw new Error('unreachable: refused above');
  const type = definition.type;
  const account = definition.exclusiveAccount?.(config);
  try {
    const { id } = await deps.sql.begin(async (tx) => {
      if (account) {
        await lockSmscAccounts(tx);
        await refuseSharedSmscAccount(deps, tx, account);
      }
      const created = await insertProvider(tx, {
        workspaceId: workspace.id,
        slug,
        name: optionalText(input.name) ?? slug,
        type,
        requiresSenderId: input.requiresSenderId === true,
        messagesPerSecond: messagesPerSecond ?? null,
        settings: config.settings,
        credentials:
          config.credentials &&
          encryptCredentials(
            deps.secret,
            providerCredentialsContext(workspace.id, slug),
            config.credentials,
          ),
      });
      await writeAudit(tx, actor, workspace.id, {
        action: 'provider.created',
        target: `provider ${slug}`,
        details: { type },
      });
      return created;
    });
    return { id, slug, type, workspace };
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict`${workspace.slug} already has a provider "${slug}"`;
    throw error;
  }
}

export interface ProviderInput {
  workspace?: string;
  slug?: string;
}

/** A provider of the workspace, by the slug of the input; not found is refused. */
async function providerOf(deps: Pick<CommandDeps, 'sql'>, input: ProviderInput) {
  const field = fieldsOf<ProviderInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  const provider = await findProvider(deps.sql, workspace.id, slug);
  if (!provider) throw notFound`${workspace.slug} has no provider "${slug}"`;
  return { workspace, provider };
}

/** What an edit form shows of a provider: its settings by field name; its credentials never. */
export interface ProviderForEdit {
  workspace: Workspace;
  provider: Omit<ProviderRecord, 'credentials' | 'settings'> & { hasCredentials: boolean };
  /** The type's non-secret fields as stored, by field name (`baseUrl`), and `countries`. */
  fields: Record<string, string>;
  countries: string;
}

export async function findProviderForEdit(
  deps: Pick<CommandDeps, 'sql' | 'providerTypes'>,
  input: ProviderInput,
): Promise<ProviderForEdit> {
  const { workspace, provider } = await providerOf(deps, input);
  const definition = definitionOf(deps.providerTypes, provider.type);
  const fields: Record<string, string> = {};
  for (const field of definition?.fields ?? []) {
    const value = field.setting && provider.settings[field.setting];
    if (value) fields[field.name] = value;
  }
  const { credentials, settings, ...shown } = provider;
  return {
    workspace,
    provider: { ...shown, hasCredentials: credentials !== null },
    fields,
    countries: settings.countries ?? '',
  };
}

export interface UpdateProviderInput extends ProviderSettingsInput {
  workspace?: string;
  slug?: string;
  /** The slug when blank. */
  name?: string;
  requiresSenderId?: boolean;
  messagesPerSecond?: number;
}

/**
 * Everything of a provider but its slug and type, replaced as given: settings and countries
 * whole, credentials field by field, a blank credential field keeping the stored value.
 * Audited as `provider.updated` with whether credentials were replaced (never which or what).
 */
export async function updateProvider(
  deps: Deps,
  actor: Actor,
  input: UpdateProviderInput,
): Promise<{ slug: string; credentialsReplaced: boolean }> {
  const { workspace, provider } = await providerOf(deps, input);
  const definition = definitionOf(deps.providerTypes, provider.type);
  if (!definition) throw invalid`${provider.slug} has a provider type Herald no longer knows`;
  const context = providerCredentialsContext(workspace.id, provider.slug);
  const stored = (
    provider.credentials ? decryptCredentials(deps.secret, context, provider.credentials) : {}
  ) as Record<string, string | undefined>;
  const given = (name: string) => {
    const value = input.fields?.[name];
    return value !== undefined && value !== '';
  };
  const secretFields = definition.fields.filter((field) => field.credential);
  const fields = { ...input.fields };
  for (const field of secretFields)
    if (!given(field.name)) fields[field.name] = stored[field.credential as string];
  const refusals = refuseAll();
  const config = refusals.check(() =>
    providerConfig({ countries: input.countries, fields }, definition, deps.providerTypes),
  );
  const messagesPerSecond = refusals.check(() => checkedRate(input.messagesPerSecond));
  refusals.done();
  if (config === undefined) throw new Error('unreachable: refused above');
  const credentialsReplaced = secretFields.some((field) => given(field.name));
  const account = provider.active ? definition.exclusiveAccount?.(config) : undefined;
  await deps.sql.begin(async (tx) => {
    if (account) {
      await lockSmscAccounts(tx);
      await refuseSharedSmscAccount(deps, tx, account, provider.id);
    }
    await updateProviderRow(tx, {
      id: provider.id,
      name: optionalText(input.name) ?? provider.slug,
      requiresSenderId: input.requiresSenderId === true,
      messagesPerSecond: messagesPerSecond ?? null,
      settings: config.settings,
      credentials:
        config.credentials && encryptCredentials(deps.secret, context, config.credentials),
    });
    await writeAudit(tx, actor, workspace.id, {
      action: 'provider.updated',
      target: `provider ${provider.slug}`,
      details: { type: provider.type, credentials_replaced: credentialsReplaced },
    });
  });
  return { slug: provider.slug, credentialsReplaced };
}

/**
 * Reaches the vendor with the provider's stored settings and credentials (its type's
 * `testConnection`, providers/<vendor>/connection-test.ts); changes nothing.
 */
export async function testProviderConnection(
  deps: Pick<CommandDeps, 'sql' | 'secret' | 'providerTypes'>,
  input: ProviderInput,
): Promise<{ slug: string; result: ConnectionTest }> {
  const { provider } = await providerOf(deps, input);
  const test = definitionOf(deps.providerTypes, provider.type)?.testConnection;
  if (!test) throw invalid`A ${provider.type} provider has no connection test`;
  try {
    return { slug: provider.slug, result: await test(provider, { secret: deps.secret }) };
  } catch {
    // Its stored configuration does not read (a credential under a key no longer held).
    return {
      slug: provider.slug,
      result: { ok: false, reason: 'Its stored settings or credentials could not be read.' },
    };
  }
}

/** Enabling an SMPP provider gives it its SMSC account again: refused while another holds it. */
export async function enableProvider(deps: Deps, actor: Actor, input: ProviderInput) {
  return setActive(deps, actor, input, true);
}

/** Sends stop choosing the provider; its senders and routes stay. */
export async function disableProvider(deps: Deps, actor: Actor, input: ProviderInput) {
  return setActive(deps, actor, input, false);
}

/** Audited as `provider.enabled` or `provider.disabled`. */
async function setActive(
  deps: Deps,
  actor: Actor,
  input: ProviderInput,
  active: boolean,
): Promise<{ slug: string; active: boolean }> {
  const field = fieldsOf<ProviderInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  const changed = await deps.sql.begin(async (tx) => {
    if (active) {
      await lockSmscAccounts(tx);
      const provider = await findProvider(tx, workspace.id, slug);
      const account = provider && accountOfRecord(deps, provider);
      if (provider && account) await refuseSharedSmscAccount(deps, tx, account, provider.id);
    }
    const changed = await setProviderActive(tx, workspace.id, slug, active);
    if (changed)
      await writeAudit(tx, actor, workspace.id, {
        action: active ? 'provider.enabled' : 'provider.disabled',
        target: `provider ${slug}`,
        details: {},
      });
    return changed;
  });
  if (!changed) throw notFound`${workspace.slug} has no provider "${slug}"`;
  return { slug, active };
}

/**
 * `own` or a provider of the workspace, named by `field` of the caller's input: enabled, unless
 * `mayBeDisabled` (a disabled provider's senders may be registered before it is enabled again).
 */
export async function checkProvider(
  deps: { sql: Sql | TransactionSql },
  workspace: Workspace,
  slug: string,
  field: FieldRef,
  { mayBeDisabled = false } = {},
): Promise<void> {
  if (slug === OWN_PROVIDER_SLUG) return;
  const provider = await findProvider(deps.sql, workspace.id, slug);
  if (!provider) throw invalid`${field} "${slug}" is not a provider of ${workspace.slug}`;
  if (!provider.active && !mayBeDisabled)
    throw invalid`${field} "${slug}" is disabled in ${workspace.slug}`;
}

/**
 * What verifies and parses the webhooks a provider posts: its type's adapter (or its webhook
 * parser, for a type whose receipts do not come by webhook); undefined for an unknown type.
 */
export function webhookParserOf(
  deps: Pick<CommandDeps, 'secret' | 'providerTypes'>,
  record: StoredProvider,
): WebhookParser | undefined {
  const type = definitionOf(deps.providerTypes, record.type);
  const context = { secret: deps.secret };
  return type && (type.webhookParser?.(record, context) ?? type.create(record, context));
}
