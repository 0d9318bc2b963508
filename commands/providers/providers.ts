/** A workspace's SMS providers: created with their settings and credentials, enabled, disabled. */
import type { Sql, TransactionSql } from '../../db/client.js';
import {
  findProvider,
  insertProvider,
  listProviders,
  lockSmscAccounts,
  type ProviderListing,
  setProviderActive,
} from '../../db/providers.js';
import type { Workspace } from '../../db/workspaces.js';
import {
  definitionOf,
  OWN_PROVIDER_SLUG,
  type StoredProvider,
  type WebhookParser,
} from '../../domain/provider-definition.js';
import { encryptCredentials, providerCredentialsContext } from '../../security/credentials.js';
import type { CommandDeps } from '../deps.js';
import {
  conflict,
  type FieldRef,
  fieldsOf,
  invalid,
  isUniqueViolation,
  notFound,
  optionalText,
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

export async function createProvider(
  deps: Deps,
  input: CreateProviderInput,
): Promise<{ id: number; slug: string; type: string; workspace: Workspace }> {
  const field = fieldsOf<CreateProviderInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  if (slug === OWN_PROVIDER_SLUG) throw invalid`"own" is the operator's provider and is reserved`;
  const type = requiredText(input.type, field('type'));
  const definition = definitionOf(deps.providerTypes, type);
  if (!definition)
    throw invalid`${field('type')} must be one of ${deps.providerTypes.map((each) => each.type).join(', ')}`;
  const config = providerConfig(input, definition, deps.providerTypes);
  const account = definition.exclusiveAccount?.(config);
  const insert = (sql: Sql | TransactionSql) => {
    const messagesPerSecond = input.messagesPerSecond;
    if (
      messagesPerSecond !== undefined &&
      !(
        Number.isInteger(messagesPerSecond) &&
        messagesPerSecond >= 1 &&
        messagesPerSecond <= MAX_MESSAGES_PER_SECOND
      )
    )
      throw invalid`${field('messagesPerSecond')} must be a whole number from 1 to ${MAX_MESSAGES_PER_SECOND}`;
    return insertProvider(sql, {
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
  };
  try {
    const { id } = account
      ? await deps.sql.begin(async (tx) => {
          await lockSmscAccounts(tx);
          await refuseSharedSmscAccount(deps, tx, account);
          return insert(tx);
        })
      : await insert(deps.sql);
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

/** Enabling an SMPP provider gives it its SMSC account again: refused while another holds it. */
export async function enableProvider(deps: Deps, input: ProviderInput) {
  return setActive(deps, input, true);
}

/** Sends stop choosing the provider; its senders and routes stay. */
export async function disableProvider(deps: Deps, input: ProviderInput) {
  return setActive(deps, input, false);
}

async function setActive(
  deps: Deps,
  input: ProviderInput,
  active: boolean,
): Promise<{ slug: string; active: boolean }> {
  const field = fieldsOf<ProviderInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = resourceSlug(requiredText(input.slug, field('slug')), field('slug'));
  const changed = active
    ? await deps.sql.begin(async (tx) => {
        await lockSmscAccounts(tx);
        const provider = await findProvider(tx, workspace.id, slug);
        const account = provider && accountOfRecord(deps, provider);
        if (provider && account) await refuseSharedSmscAccount(deps, tx, account, provider.id);
        return setProviderActive(tx, workspace.id, slug, true);
      })
    : await setProviderActive(deps.sql, workspace.id, slug, false);
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
