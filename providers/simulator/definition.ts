/** The simulator as a provider type: an HTTP base URL, no credentials (docs/contracts.md "Providers"). */
import { z } from 'zod';
import { declaredCountries } from '../../domain/provider-definition.js';
import { providerCredentialsContext } from '../../security/credentials.js';
import { providerReceiptKey, providerReceiptKeys } from '../../security/keys.js';
import { httpUrl, requiredText } from '../field-rules.js';
import type { VendorDefinition } from '../types.js';
import { SimulatorProvider } from './client.js';

/**
 * What a simulator-protocol provider (the `own` provider included) is sent with each submission
 * and signs that message's receipts with: per workspace provider, derived from HERALD_SECRET, so
 * it needs no configuration and every api and worker process agrees on it (HERALD_SECRET's newest
 * key's; receipts signed under an older key of the ring still verify).
 */
export function simulatorCredential(secret: string, workspaceId: number, slug: string): string {
  return providerReceiptKey(secret, providerCredentialsContext(workspaceId, slug));
}

export const simulatorSettings = z.object({ base_url: z.string().min(1) });

export const simulator: VendorDefinition = {
  type: 'simulator',
  settings: simulatorSettings,
  credentials: null,
  fields: [{ name: 'baseUrl', value: '<url>', required: true, shared: true }],
  usage: {
    lines: [
      ['workspace', 'slug', 'type', 'baseUrl'],
      ['name', 'requiresSenderId', 'messagesPerSecond'],
      ['countries'],
    ],
  },
  configure: (input) => ({
    settings: { base_url: httpUrl('baseUrl', requiredText(input, 'baseUrl')) },
    credentials: null,
  }),
  create(record, { secret }) {
    if (!record.settings.base_url) throw new Error(`provider ${record.slug} has no base_url`);
    return new SimulatorProvider(record.slug, record.settings.base_url, {
      requiresSenderId: record.requiresSenderId,
      countries: declaredCountries(record),
      messagesPerSecond: record.messagesPerSecond,
      credential: simulatorCredential(secret, record.workspaceId, record.slug),
      earlierCredentials: providerReceiptKeys(
        secret,
        providerCredentialsContext(record.workspaceId, record.slug),
      ).slice(1),
    });
  },
};
