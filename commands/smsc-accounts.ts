/**
 * One SMSC account serves one workspace provider: receipts and replies are assigned by the bind
 * they arrive on, so a second active provider on the same host, port and system id (in any
 * workspace) would take the first one's. Creating or enabling an SMPP provider checks this.
 */
import type { TransactionSql } from '../db/client.js';
import { findSmscAccountHolders, type ProviderRecord } from '../db/providers.js';
import { smppCredentials } from '../providers/smpp/config.js';
import { decryptCredentials, providerCredentialsContext } from '../security/credentials.js';
import { conflict, fieldsOf } from './input.js';
import type { ProviderSettingsInput } from './provider-settings.js';

const field = fieldsOf<ProviderSettingsInput>();

/** The host (any case), the port and the system id: another port is another SMSC endpoint. */
export interface SmscAccount {
  host: string;
  port: string | undefined;
  systemId: string;
}

/**
 * A stored SMPP provider's account; undefined when its credentials do not decrypt under this
 * HERALD_SECRET (it cannot bind then, so it holds no account).
 */
export function smscAccountOfRecord(
  secret: string,
  record: Pick<ProviderRecord, 'workspaceId' | 'slug' | 'settings' | 'credentials'>,
): SmscAccount | undefined {
  if (!record.credentials || !record.settings.host) return undefined;
  try {
    const credentials = decryptCredentials(
      secret,
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

/** Refuses an account another active provider holds. Run under lockSmscAccounts; the system id is never shown. */
export async function refuseSharedSmscAccount(
  secret: string,
  tx: TransactionSql,
  account: SmscAccount,
  exceptProviderId?: number,
): Promise<void> {
  for (const holder of await findSmscAccountHolders(tx)) {
    if (holder.id === exceptProviderId) continue;
    const held = smscAccountOfRecord(secret, holder);
    if (held?.host.toLowerCase() !== account.host.toLowerCase()) continue;
    if (held.port !== account.port || held.systemId !== account.systemId) continue;
    throw conflict`Provider "${holder.slug}" of workspace ${holder.workspaceSlug} already uses this SMSC account (the same ${field('host')}, ${field('port')} and ${field('systemId')}). One SMSC account serves one workspace provider, because receipts and replies are assigned by the bind they arrive on; disable that provider first to move the account.`;
  }
}
