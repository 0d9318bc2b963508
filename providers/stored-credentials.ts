import type { StoredProvider } from '../domain/provider-definition.js';
import { decryptCredentials, providerCredentialsContext } from '../security/credentials.js';

/** A stored provider's credentials, decrypted; throws when it has none or they do not decrypt. */
export function storedCredentials(
  record: Pick<StoredProvider, 'workspaceId' | 'slug' | 'credentials'>,
  secret: string,
): unknown {
  if (!record.credentials) throw new Error(`provider ${record.slug} has no credentials`);
  return decryptCredentials(
    secret,
    providerCredentialsContext(record.workspaceId, record.slug),
    record.credentials,
  );
}
