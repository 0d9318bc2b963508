import { isSupportedCountry } from 'libphonenumber-js/max';
import { z } from 'zod';
import type { Sql, TransactionSql } from '../../db/client.js';
import {
  findProvider,
  findProviders,
  findSmscAccountHolders,
  insertFailoverRoute,
  insertProvider,
  lockSmscAccounts,
  type ProviderRecord,
  setProviderActive,
} from '../../db/providers.js';
import { OWN_PROVIDER_SLUG } from '../../providers/registry.js';
import { smppCredentials } from '../../providers/smpp/config.js';
import {
  decryptCredentials,
  encryptCredentials,
  providerCredentialsContext,
} from '../../security/credentials.js';
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

/** Types `provider create` can configure. */
const CREATABLE_TYPES = ['simulator', 'twilio', 'smpp'] as const;
type CreatableType = (typeof CREATABLE_TYPES)[number];

const TWILIO_OPTIONS = ['account-sid', 'auth-token', 'from', 'messaging-service-sid'];
const SMPP_OPTIONS = [
  'host',
  'port',
  'system-id',
  'password',
  'system-type',
  'source-addr',
  'window',
];

/** Every option of `provider create` beyond workspace, slug, name and type. */
export const PROVIDER_CREATE_OPTIONS = [
  'base-url',
  'requires-sender-id',
  'messages-per-second',
  'countries',
  ...TWILIO_OPTIONS,
  ...SMPP_OPTIONS,
];

const E164 = /^\+[1-9]\d{1,14}$/;
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IP_ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9A-Fa-f:]+\]?)$/;
/** Alphanumeric sender id: up to 11 letters, digits or spaces, at least one letter. */
const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;

function httpUrl(name: string, value: string): string {
  if (!z.url({ protocol: /^https?$/ }).safeParse(value).success) {
    throw new UsageError(`--${name} "${value}" is not an http(s) URL`);
  }
  return value;
}

interface ProviderConfig {
  settings: Record<string, string>;
  /** Plaintext credentials: encrypted before they reach the database. */
  credentials: Record<string, string> | null;
}

/** Refuses the options of the other types, so a mistyped --type is not silently accepted. */
function refuseOptionsOf(options: Options, type: CreatableType) {
  const foreign = { twilio: TWILIO_OPTIONS, smpp: SMPP_OPTIONS, simulator: [] };
  for (const [owner, names] of Object.entries(foreign)) {
    if (owner === type) continue;
    const given = names.find((name) => options[name] !== undefined);
    if (given) throw new UsageError(`--${given} applies only to --type ${owner}`);
  }
}

function simulatorConfig(options: Options): ProviderConfig {
  return {
    settings: { base_url: httpUrl('base-url', required(options, 'base-url')) },
    credentials: null,
  };
}

/** Never echoes the auth token, not even in an error. */
function twilioConfig(options: Options): ProviderConfig {
  const accountSid = required(options, 'account-sid');
  if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid))
    throw new UsageError('--account-sid must be "AC" followed by 32 hexadecimal digits');
  const authToken = required(options, 'auth-token');
  if (!/^\S{8,}$/.test(authToken))
    throw new UsageError('--auth-token must be at least 8 characters without spaces');
  const from = optional(options, 'from');
  const messagingServiceSid = optional(options, 'messaging-service-sid');
  if (!from && !messagingServiceSid)
    throw new UsageError('Give --from or --messaging-service-sid (Twilio needs a sender)');
  if (from && !E164.test(from) && !ALPHANUMERIC_SENDER.test(from))
    throw new UsageError(
      `--from "${from}" must be an E.164 number or an alphanumeric sender id (up to 11 characters)`,
    );
  if (messagingServiceSid && !/^MG[0-9a-fA-F]{32}$/.test(messagingServiceSid))
    throw new UsageError('--messaging-service-sid must be "MG" followed by 32 hexadecimal digits');
  const baseUrl = optional(options, 'base-url');
  const settings: Record<string, string> = {};
  if (baseUrl) settings.base_url = httpUrl('base-url', baseUrl);
  if (from) settings.from = from;
  if (messagingServiceSid) settings.messaging_service_sid = messagingServiceSid;
  return { settings, credentials: { account_sid: accountSid, auth_token: authToken } };
}

/** Printable ASCII of SMPP 3.4's C-octet strings, which hold `max` characters before the NUL. */
function smppString(options: Options, name: string, max: number): string | undefined {
  const value = optional(options, name);
  if (value !== undefined && !new RegExp(`^[\\x21-\\x7e]{1,${max}}$`).test(value))
    throw new UsageError(
      `--${name} must be 1 to ${max} printable ASCII characters without spaces (SMPP 3.4)`,
    );
  return value;
}

function wholeNumber(options: Options, name: string, min: number, max: number) {
  const value = optional(options, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return String(Number(value));
}

/** Never echoes the password, not even in an error. */
function smppConfig(options: Options): ProviderConfig {
  const host = required(options, 'host');
  if (!HOST_NAME.test(host) && !IP_ADDRESS.test(host))
    throw new UsageError(`--host "${host}" must be a host name or an IP address`);
  const port = wholeNumber(options, 'port', 1, 65535);
  if (port === undefined) throw new UsageError('--port is required');
  const systemId = smppString(options, 'system-id', 15);
  if (systemId === undefined) throw new UsageError('--system-id is required');
  const password = options.password;
  if (typeof password !== 'string' || password === '')
    throw new UsageError('--password is required');
  if (!/^[\x21-\x7e]{1,8}$/.test(password))
    throw new UsageError(
      '--password must be 1 to 8 printable ASCII characters without spaces (SMPP 3.4)',
    );
  const systemType = smppString(options, 'system-type', 12);
  const sourceAddr = optional(options, 'source-addr');
  if (
    sourceAddr !== undefined &&
    !E164.test(sourceAddr) &&
    !ALPHANUMERIC_SENDER.test(sourceAddr) &&
    !/^\d{3,8}$/.test(sourceAddr)
  )
    throw new UsageError(
      `--source-addr "${sourceAddr}" must be an E.164 number, a short code or an alphanumeric sender id (up to 11 characters)`,
    );
  const window = wholeNumber(options, 'window', 1, 100);
  const settings: Record<string, string> = { host: host.replace(/^\[|\]$/g, ''), port };
  if (systemType) settings.system_type = systemType;
  if (sourceAddr) settings.source_addr = sourceAddr;
  if (window) settings.window = window;
  return { settings, credentials: { system_id: systemId, password } };
}

/** `--messages-per-second`: the provider's throughput, shared by every worker; unset keeps the adapter's. */
function messagesPerSecondOption(options: Options): number | null {
  const value = optional(options, 'messages-per-second');
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 10_000)
    throw new UsageError('--messages-per-second must be a whole number from 1 to 10000');
  return Number(value);
}

/** `--countries AU,NZ`: the destinations the provider serves; unset: every country. */
function countriesOption(options: Options): string | undefined {
  const value = optional(options, 'countries');
  if (value === undefined) return undefined;
  const codes = value.split(',').map((code) => code.trim().toUpperCase());
  const unknown = codes.find((code) => !isSupportedCountry(code));
  if (unknown !== undefined)
    throw new UsageError(`--countries: "${unknown}" is not an ISO 3166 alpha-2 country code`);
  return [...new Set(codes)].join(',');
}

export async function providerCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = slugOption(options);
  if (slug === OWN_PROVIDER_SLUG)
    throw new UsageError('"own" is the operator\'s provider and is reserved');
  const type = required(options, 'type');
  if (!(CREATABLE_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`--type must be one of ${CREATABLE_TYPES.join(', ')}`);
  }
  refuseOptionsOf(options, type as CreatableType);
  const config =
    type === 'twilio'
      ? twilioConfig(options)
      : type === 'smpp'
        ? smppConfig(options)
        : simulatorConfig(options);
  const countries = countriesOption(options);
  if (countries) config.settings.countries = countries;
  const insert = (sql: Sql | TransactionSql) =>
    insertProvider(sql, {
      workspaceId: workspace.id,
      slug,
      name: optional(options, 'name') ?? slug,
      type: type as CreatableType,
      requiresSenderId: options['requires-sender-id'] === true,
      messagesPerSecond: messagesPerSecondOption(options),
      settings: config.settings,
      credentials:
        config.credentials &&
        encryptCredentials(
          context.secret,
          providerCredentialsContext(workspace.id, slug),
          config.credentials,
        ),
    });
  try {
    const { id } =
      type === 'smpp'
        ? await context.sql.begin(async (tx) => {
            await lockSmscAccounts(tx);
            await refuseSharedSmscAccount(context, tx, smscAccountOf(config));
            return insert(tx);
          })
        : await insert(context.sql);
    return {
      json: { id, slug },
      human: `Created ${type} provider ${slug} (id ${id}) in ${workspace.slug}`,
    };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new UsageError(`${workspace.slug} already has a provider "${slug}"`);
    throw error;
  }
}

/**
 * An SMSC account: the host (any case), the port and the system id. Another port on one host is
 * another SMSC endpoint, with binds (and so receipts) of its own.
 */
interface SmscAccount {
  host: string;
  port: string | undefined;
  systemId: string;
}

function smscAccountOf(config: ProviderConfig): SmscAccount {
  return {
    host: config.settings.host as string,
    port: config.settings.port,
    systemId: config.credentials?.system_id as string,
  };
}

/**
 * A stored SMPP provider's account; undefined when its credentials do not decrypt under this
 * HERALD_SECRET (it cannot bind then, so it holds no account).
 */
function smscAccountOfRecord(
  context: AdminContext,
  record: Pick<ProviderRecord, 'workspaceId' | 'slug' | 'settings' | 'credentials'>,
): SmscAccount | undefined {
  if (!record.credentials || !record.settings.host) return undefined;
  try {
    const credentials = decryptCredentials(
      context.secret,
      providerCredentialsContext(record.workspaceId, record.slug),
      record.credentials,
    );
    const systemId = smppCredentials.safeParse(credentials).data?.system_id;
    return systemId === undefined
      ? undefined
      : { host: record.settings.host, port: record.settings.port, systemId };
  } catch {
    return undefined;
  }
}

/**
 * One SMSC account serves one workspace provider: receipts and replies are assigned by the bind
 * they arrive on, so a second active provider on the same host, port and system id (in any workspace)
 * would take the first one's. Run under lockSmscAccounts. The system id is never printed.
 */
async function refuseSharedSmscAccount(
  context: AdminContext,
  tx: TransactionSql,
  account: SmscAccount,
  exceptProviderId?: number,
): Promise<void> {
  for (const holder of await findSmscAccountHolders(tx)) {
    if (holder.id === exceptProviderId) continue;
    const held = smscAccountOfRecord(context, holder);
    if (held?.host.toLowerCase() !== account.host.toLowerCase()) continue;
    if (held.port !== account.port || held.systemId !== account.systemId) continue;
    throw new UsageError(
      `Provider "${holder.slug}" of workspace ${holder.workspaceSlug} already uses this SMSC account (the same --host, --port and --system-id). One SMSC account serves one workspace provider, because receipts and replies are assigned by the bind they arrive on; disable that provider first to move the account.`,
    );
  }
}

/** Enabling an SMPP provider gives it its SMSC account again: refused while another holds it. */
async function enableSmppProvider(context: AdminContext, workspaceId: number, slug: string) {
  return context.sql.begin(async (tx) => {
    await lockSmscAccounts(tx);
    const provider = await findProvider(tx, workspaceId, slug);
    const account = provider?.type === 'smpp' && smscAccountOfRecord(context, provider);
    if (provider && account) await refuseSharedSmscAccount(context, tx, account, provider.id);
    return setProviderActive(tx, workspaceId, slug, true);
  });
}

async function providerSetActive(context: AdminContext, options: Options, active: boolean) {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = slugOption(options);
  const changed = active
    ? await enableSmppProvider(context, workspace.id, slug)
    : await setProviderActive(context.sql, workspace.id, slug, false);
  if (!changed) {
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
