/**
 * The worker's SMPP binds, with what they read and deliver written through db/: the active SMPP
 * providers, receipts on their message (db/smpp.ts), replies as STOP/START or stored for the
 * workspace with HELP answered (db/inbound-messages.ts).
 * The worker makes them, hands them to its activities (ActivityDeps.smppSessions), closes them.
 */
import type { Sql } from '../db/client.js';
import { type InboundDelivery, recordInboundDelivery } from '../db/inbound-messages.js';
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

/** Starts HELP's answer to a stored reply (temporal/workflow-starts.ts startHelpReplyWorkflow). */
export type HelpReplyStarter = (reply: { workspaceId: number; inboundId: number }) => Promise<void>;

export function smppSinkOf(
  sql: Sql,
  /** HERALD_SECRET: a START reply lifts an erased number's opt-out, kept as its keyed hash. */
  secret: string,
  /** The providers to keep a bind for; by default every active SMPP provider. */
  activeProviders: () => Promise<StoredProvider[]> = () => findActiveSmppProviders(sql),
  /** Without one (a test's sessions), a HELP's answer stays due until a delivery that has one. */
  startHelpReply?: HelpReplyStarter,
): SmppSink {
  return {
    activeProviders,
    receipt: async (receipt) => {
      const { recorded } = await recordSmppReceipt(sql, receipt);
      if (recorded) observeReceipt(receipt.status, recorded);
    },
    reply: async (reply) => {
      // deliver_sm carries no message id: an identical reply within minutes is the same one.
      const delivery: InboundDelivery = { ...reply, providerMessageId: null };
      await recordInboundDelivery(sql, delivery, {
        erasedForms: (number) => erasedRecipientForms(secret, number),
        startHelpReply,
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
  /** The worker's: HELP answers are started through its Temporal client. */
  startHelpReply?: HelpReplyStarter;
  log?: SmppLog;
  client?: Partial<SmppClientOptions>;
}): SmppSessions {
  return new SmppSessions({
    sink: smppSinkOf(options.sql, options.secret, options.providers, options.startHelpReply),
    secret: options.secret,
    log: options.log,
    client: options.client,
  });
}
