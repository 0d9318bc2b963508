import type { Sql } from '../db/client.js';
import { findProviders, type ProviderRecord } from '../db/providers.js';
import { SimulatorProvider } from './simulator/client.js';
import type { SmsProvider } from './types.js';

export const OWN_PROVIDER_SLUG = 'own';

export interface ProviderRegistryConfig {
  ownProviderUrl: string;
}

function adapterFor(record: ProviderRecord): SmsProvider {
  switch (record.type) {
    case 'simulator':
      if (!record.settings.base_url) throw new Error(`provider ${record.slug} has no base_url`);
      return new SimulatorProvider(record.slug, record.settings.base_url, {
        requiresSenderId: record.requiresSenderId,
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
      return [new SimulatorProvider(OWN_PROVIDER_SLUG, config.ownProviderUrl)];
    const record = records.find((candidate) => candidate.slug === slug);
    return record?.active ? [adapterFor(record)] : [];
  });
}
