/**
 * The worker's SMPP binds, with what they read and deliver written through db/: the active SMPP
 * providers, receipts on their message (db/smpp.ts), replies as STOP/START (db/opt-outs.ts).
 * The worker makes them, hands them to its activities (ActivityDeps.smppSessions), closes them.
 */
import type { Sql } from '../db/client.js';
import { applyInboundReply } from '../db/opt-outs.js';
import {
  deleteStaleSmppRecords,
  findActiveSmppProviders,
  recordMessageParts,
  recordSmppReceipt,
} from '../db/smpp.js';
import type { StoredProvider } from '../domain/provider-definition.js';
import type { SmppClientOptions, SmppLog } from '../providers/smpp/client.js';
import { SmppSessions, type SmppSink } from '../providers/smpp/sessions.js';
import { erasedRecipientForms } from '../security/recipient-hash.js';
import { observeReceipt } from '../telemetry/metrics.js';

export function smppSinkOf(
  sql: Sql,
  /** HERALD_SECRET: a START reply lifts an erased number's opt-out, kept as its keyed hash. */
  secret: string,
  /** The providers to keep a bind for; by default every active SMPP provider. */
  activeProviders: () => Promise<StoredProvider[]> = () => findActiveSmppProviders(sql),
): SmppSink {
  return {
    activeProviders,
    receipt: async (receipt) => {
      const { recorded } = await recordSmppReceipt(sql, receipt);
      if (recorded) observeReceipt(receipt.status, recorded);
    },
    reply: async (reply) => {
      await applyInboundReply(sql, {
        ...reply,
        erasedForms: (number) => erasedRecipientForms(secret, number),
      });
    },
    messageParts: (parts) => recordMessageParts(sql, parts),
    cleanUp: () => deleteStaleSmppRecords(sql, { pendingDays: 7, partDays: 30 }),
  };
}

export function createSmppSessions(options: {
  sql: Sql;
  /** HERALD_SECRET: decrypts the providers' credentials. */
  secret: string;
  providers?: () => Promise<StoredProvider[]>;
  log?: SmppLog;
  client?: Partial<SmppClientOptions>;
}): SmppSessions {
  return new SmppSessions({
    sink: smppSinkOf(options.sql, options.secret, options.providers),
    secret: options.secret,
    log: options.log,
    client: options.client,
  });
}
