import { isSupportedCountry } from 'libphonenumber-js/max';
import { z } from 'zod';
import {
  findProviders,
  insertFailoverRoute,
  insertProvider,
  setProviderActive,
} from '../../db/providers.js';
import { OWN_PROVIDER_SLUG } from '../../providers/registry.js';
import { encryptCredentials, providerCredentialsContext } from '../../security/credentials.js';
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

/** Types `provider create` can configure; SMPP arrives with its adapter. */
const CREATABLE_TYPES = ['simulator', 'twilio'] as const;
type CreatableType = (typeof CREATABLE_TYPES)[number];

const TWILIO_OPTIONS = ['account-sid', 'auth-token', 'from', 'messaging-service-sid'];
const E164 = /^\+[1-9]\d{1,14}$/;
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

function simulatorConfig(options: Options): ProviderConfig {
  const given = TWILIO_OPTIONS.find((name) => options[name] !== undefined);
  if (given) throw new UsageError(`--${given} applies only to --type twilio`);
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
  const config =
    (type as CreatableType) === 'twilio' ? twilioConfig(options) : simulatorConfig(options);
  const countries = countriesOption(options);
  if (countries) config.settings.countries = countries;
  try {
    const { id } = await insertProvider(context.sql, {
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
