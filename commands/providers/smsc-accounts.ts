/**
 * One SMSC account serves one workspace provider: receipts and replies are assigned by the bind
 * they arrive on, so a second active provider on the same host, port and system id (in any
 * workspace) would take the first one's. Creating or enabling a provider of a type that holds
 * its account alone (its definition's `exclusiveAccount`: SMPP) checks this.
 */
import type { TransactionSql } from '../../db/client.js';
import { type AccountHolder, findAccountHolders } from '../../db/providers.js';
import {
  definitionOf,
  type ExclusiveAccount,
  type ProviderDefinition,
} from '../../domain/provider-definition.js';
import { decryptCredentials, providerCredentialsContext } from '../../security/credentials.js';
import { conflict, type FieldRef } from '../input.js';

const field = (name: 'host' | 'port' | 'systemId'): FieldRef => ({ field: name });

type Deps = { secret: string; providerTypes: readonly ProviderDefinition[] };

/**
 * A stored provider's account; undefined when its type holds none or its credentials do not
 * decrypt under this HERALD_SECRET (it cannot bind then, so it holds no account).
 */
export function accountOfRecord(
  deps: Deps,
  record: Pick<AccountHolder, 'type' | 'workspaceId' | 'slug' | 'settings' | 'credentials'>,
): ExclusiveAccount | undefined {
  const type = definitionOf(deps.providerTypes, record.type);
  if (!type?.exclusiveAccount || !record.credentials) return undefined;
  try {
    const credentials = decryptCredentials(
      deps.secret,
      providerCredentialsContext(record.workspaceId, record.slug),
      record.credentials,
    );
    return type.exclusiveAccount({ settings: record.settings, credentials });
  } catch {
    return undefined;
  }
}

/** Refuses an account another active provider holds. Run under lockSmscAccounts; the system id is never shown. */
export async function refuseSharedSmscAccount(
  deps: Deps,
  tx: TransactionSql,
  account: ExclusiveAccount,
  exceptProviderId?: number,
): Promise<void> {
  const exclusive = deps.providerTypes.filter((type) => type.exclusiveAccount);
  const holders = await findAccountHolders(
    tx,
    exclusive.map((type) => type.type),
  );
  for (const holder of holders) {
    if (holder.id === exceptProviderId) continue;
    const held = accountOfRecord(deps, holder);
    if (held?.host.toLowerCase() !== account.host.toLowerCase()) continue;
    if (held.port !== account.port || held.systemId !== account.systemId) continue;
    throw conflict`Provider "${holder.slug}" of workspace ${holder.workspaceSlug} already uses this SMSC account (the same ${field('host')}, ${field('port')} and ${field('systemId')}). One SMSC account serves one workspace provider, because receipts and replies are assigned by the bind they arrive on; disable that provider first to move the account.`;
  }
}
