import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { StoredProvider } from '../../domain/provider-definition.js';
import { storedCredentials } from '../stored-credentials.js';

/** Stored encrypted in providers.credentials: the bind's account. */
export const smppCredentials = z.object({
  system_id: z.string().min(1).max(15),
  password: z.string().min(1).max(8),
});

/** Non-secret settings in providers.settings (strings, as the CLI stores them). */
export const smppSettings = z.object({
  host: z.string().min(1),
  port: z.coerce.number().int().min(1).max(65535),
  system_type: z.string().max(12).optional(),
  /** The sender used when a message has no sender id of its own. */
  source_addr: z.string().min(1).optional(),
  window: z.coerce.number().int().min(1).max(100).optional(),
});

/** Submissions per second Herald paces an SMPP provider to unless its record says otherwise. */
export const SMPP_DEFAULT_MESSAGES_PER_SECOND = 50;
export const SMPP_DEFAULT_WINDOW = 10;

export interface SmppProviderConfig {
  providerId: number;
  workspaceId: number;
  slug: string;
  host: string;
  port: number;
  systemId: string;
  password: string;
  systemType: string;
  sourceAddr: string | null;
  window: number;
  /** Changes whenever the bind would: host, port, account, system_type or window. */
  bindKey: string;
}

/** The SMPP configuration of a provider record; throws when it is incomplete. */
export function smppConfigOf(record: StoredProvider, secret: string): SmppProviderConfig {
  const credentials = smppCredentials.parse(storedCredentials(record, secret));
  const settings = smppSettings.parse(record.settings);
  const bind = {
    host: settings.host,
    port: settings.port,
    systemId: credentials.system_id,
    password: credentials.password,
    systemType: settings.system_type ?? '',
    window: settings.window ?? SMPP_DEFAULT_WINDOW,
  };
  const digest = createHash('sha256').update(JSON.stringify(bind)).digest('hex').slice(0, 16);
  return {
    providerId: record.id,
    workspaceId: record.workspaceId,
    slug: record.slug,
    ...bind,
    sourceAddr: settings.source_addr ?? null,
    bindKey: `${record.id}:${digest}`,
  };
}
