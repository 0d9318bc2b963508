import type { Sql } from '../db/client.js';
import { findProvider, findProviders, type ProviderRecord } from '../db/providers.js';
import type { Countries } from '../domain/phone.js';
import { decryptCredentials, providerCredentialsContext } from '../security/credentials.js';
import { providerReceiptKey } from '../security/keys.js';
import { parseSimulatorReceipt, SimulatorProvider } from './simulator/client.js';
import { SMPP_WEBHOOK_ANSWER, SmppProvider } from './smpp/adapter.js';
import { smppConfigOf } from './smpp/config.js';
import { TwilioProvider, twilioCredentials } from './twilio/adapter.js';
import type { ReceiptParser, SmsProvider } from './types.js';

export const OWN_PROVIDER_SLUG = 'own';

export interface ProviderRegistryConfig {
  ownProviderUrl: string;
  /** The `own` provider's throughput (OWN_PROVIDER_MESSAGES_PER_SECOND); unset: no limit. */
  ownProviderMessagesPerSecond?: number | null;
  /** HERALD_SECRET: decrypts the providers' credentials, derives their receipt keys. */
  secret: string;
}

function credentialsOf(record: ProviderRecord, secret: string): unknown {
  if (!record.credentials) throw new Error(`provider ${record.slug} has no credentials`);
  return decryptCredentials(
    secret,
    providerCredentialsContext(record.workspaceId, record.slug),
    record.credentials,
  );
}

/**
 * What a simulator-protocol provider (the `own` provider included) is sent with each submission
 * and signs that message's receipts with: per workspace provider, derived from HERALD_SECRET, so
 * it needs no configuration and every api and worker process agrees on it.
 */
export function simulatorCredential(secret: string, workspaceId: number, slug: string): string {
  return providerReceiptKey(secret, providerCredentialsContext(workspaceId, slug));
}

/** The destinations a workspace provider takes, as configured (`--countries`); else every one. */
export function declaredCountries(record: Pick<ProviderRecord, 'settings'>): Countries {
  return record.settings.countries ? record.settings.countries.split(',') : 'all';
}

/** The adapter for a workspace provider; throws when its configuration is unusable. */
export function adapterFor(record: ProviderRecord, secret: string): SmsProvider {
  switch (record.type) {
    case 'simulator':
      if (!record.settings.base_url) throw new Error(`provider ${record.slug} has no base_url`);
      return new SimulatorProvider(record.slug, record.settings.base_url, {
        requiresSenderId: record.requiresSenderId,
        countries: declaredCountries(record),
        messagesPerSecond: record.messagesPerSecond,
        credential: simulatorCredential(secret, record.workspaceId, record.slug),
      });
    case 'twilio':
      return new TwilioProvider(record.slug, {
        ...twilioCredentials.parse(credentialsOf(record, secret)),
        ...record.settings,
        countries: declaredCountries(record),
        requiresSenderId: record.requiresSenderId,
        messagesPerSecond: record.messagesPerSecond,
      });
    case 'smpp':
      return new SmppProvider(smppConfigOf(record, secret), {
        requiresSenderId: record.requiresSenderId,
        countries: declaredCountries(record),
        messagesPerSecond: record.messagesPerSecond,
      });
  }
}

/** Adapters for a workspace's providers, in the order asked; `own` is the operator's provider. */
export async function resolveProviders(
  sql: Sql,
  config: ProviderRegistryConfig,
  workspaceId: number,
  slugs: string[],
): Promise<SmsProvider[]> {
  const records = await findProviders(
    sql,
    workspaceId,
    slugs.filter((slug) => slug !== OWN_PROVIDER_SLUG),
  );
  return slugs.flatMap((slug) => {
    if (slug === OWN_PROVIDER_SLUG)
      return [
        new SimulatorProvider(OWN_PROVIDER_SLUG, config.ownProviderUrl, {
          messagesPerSecond: config.ownProviderMessagesPerSecond ?? null,
          credential: simulatorCredential(config.secret, workspaceId, OWN_PROVIDER_SLUG),
        }),
      ];
    const record = records.find((candidate) => candidate.slug === slug);
    return record?.active ? [adapterFor(record, config.secret)] : [];
  });
}

/** The adapter of a workspace provider that posts recipients' replies, if it does. */
export async function inboundParserFor(
  sql: Sql,
  secret: string,
  workspaceId: number,
  slug: string,
): Promise<Required<Pick<SmsProvider, 'parseInbound'>> | undefined> {
  const record = await findProvider(sql, workspaceId, slug);
  const adapter = record && adapterFor(record, secret);
  const parseInbound = adapter?.parseInbound?.bind(adapter);
  return parseInbound && { parseInbound };
}

/**
 * What verifies and parses the receipts posted to `/webhooks/providers/<slug>` for a workspace:
 * the provider's adapter, whether or not it is still active (receipts outlive a disable).
 */
export async function receiptParserFor(
  sql: Sql,
  secret: string,
  workspaceId: number,
  slug: string,
): Promise<ReceiptParser | undefined> {
  if (slug === OWN_PROVIDER_SLUG) {
    const credential = simulatorCredential(secret, workspaceId, OWN_PROVIDER_SLUG);
    return { parseReceipt: (request) => parseSimulatorReceipt(request, credential) };
  }
  const record = await findProvider(sql, workspaceId, slug);
  // SMPP receipts come over the worker's bind; the api never opens one.
  if (record?.type === 'smpp') return { parseReceipt: () => SMPP_WEBHOOK_ANSWER };
  return record ? adapterFor(record, secret) : undefined;
}
