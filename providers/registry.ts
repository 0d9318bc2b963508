/**
 * The provider types Herald knows, one definition per vendor folder, and adapters made from the
 * records the caller read: the registry does no SQL. Adding a vendor is its folder, a line here
 * and a migration allowing its type.
 */
import {
  definitionOf,
  OWN_PROVIDER_SLUG,
  ownProviderRecord,
  type StoredProvider,
} from '../domain/provider-definition.js';
import { simulator } from './simulator/definition.js';
import { smpp } from './smpp/definition.js';
import type { SmppSessions } from './smpp/sessions.js';
import { twilio } from './twilio/definition.js';
import type { SmsProvider, VendorDefinition } from './types.js';

export { declaredCountries, OWN_PROVIDER_SLUG } from '../domain/provider-definition.js';
export { simulatorCredential } from './simulator/definition.js';

/** Every provider type, in the order `herald help` lists them. */
export const PROVIDER_DEFINITIONS: readonly VendorDefinition[] = [simulator, twilio, smpp];

export interface ProviderRegistryConfig {
  ownProviderUrl: string;
  /** The `own` provider's throughput (OWN_PROVIDER_MESSAGES_PER_SECOND); unset: no limit. */
  ownProviderMessagesPerSecond?: number | null;
  /** HERALD_SECRET: decrypts the providers' credentials, derives their receipt keys. */
  secret: string;
  /** The worker's SMPP binds; absent in a process that holds none. */
  smppSessions?: SmppSessions;
}

/** The adapter for a workspace provider; throws when its configuration is unusable. */
export function adapterFor(
  record: StoredProvider,
  secret: string,
  smppSessions?: SmppSessions,
): SmsProvider {
  const definition = definitionOf(PROVIDER_DEFINITIONS, record.type);
  if (!definition) throw new Error(`provider ${record.slug} has unknown type ${record.type}`);
  return definition.create(record, { secret, smppSessions });
}

/**
 * Adapters for a workspace's providers, in the order asked; `own` is the operator's provider.
 * `records`: the workspace's stored providers among `slugs`; an inactive or missing one is left out.
 */
export function resolveProviders(
  records: readonly StoredProvider[],
  config: ProviderRegistryConfig,
  workspaceId: number,
  slugs: string[],
): SmsProvider[] {
  return slugs.flatMap((slug) => {
    if (slug === OWN_PROVIDER_SLUG) {
      const own = ownProviderRecord(
        workspaceId,
        config.ownProviderUrl,
        config.ownProviderMessagesPerSecond ?? null,
      );
      return [adapterFor(own, config.secret)];
    }
    const record = records.find((candidate) => candidate.slug === slug);
    return record?.active ? [adapterFor(record, config.secret, config.smppSessions)] : [];
  });
}
