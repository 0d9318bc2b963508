import type { Countries } from '../../domain/phone.js';
import type { OutboundSms, ReceiptParse, SmsProvider, SubmitOutcome } from '../types.js';
import { SMPP_DEFAULT_MESSAGES_PER_SECOND, type SmppProviderConfig } from './config.js';
import type { SmppSessions } from './sessions.js';

export const SMPP_WEBHOOK_ANSWER: ReceiptParse = {
  kind: 'invalid',
  message: 'SMPP receipts arrive over the bind, not by webhook',
};

/**
 * An SMPP 3.4 SMSC, through the worker's bind to it (providers/smpp/sessions.ts, handed to the
 * adapter by the worker's activities). A message's
 * provider id is the SMSC's message id for its first part; receipts for any part reach it.
 *
 * It has no `lookup`: SMPP 3.4 cannot find a message by the client's reference (`query_sm` takes
 * the SMSC's own id, which an unanswered submit_sm never returned), so an unknown outcome is
 * counted as failed rather than risk sending the message twice.
 */
export class SmppProvider implements SmsProvider {
  readonly requiresSenderId: boolean;
  /** Any E.164 number unless configured; the SMSC refuses what its routes do not cover. */
  readonly countries: Countries;
  readonly messagesPerSecond: number;
  readonly slug: string;
  readonly vendor = 'smpp';
  readonly #config: SmppProviderConfig;
  readonly #sessions: SmppSessions | undefined;

  constructor(
    config: SmppProviderConfig,
    /** The worker's binds; absent anywhere else (the api), where nothing is sent. */
    sessions: SmppSessions | undefined,
    options: {
      requiresSenderId?: boolean;
      messagesPerSecond?: number | null;
      countries?: Countries;
    } = {},
  ) {
    this.#config = config;
    this.#sessions = sessions;
    this.slug = config.slug;
    this.requiresSenderId = options.requiresSenderId ?? false;
    this.messagesPerSecond = options.messagesPerSecond ?? SMPP_DEFAULT_MESSAGES_PER_SECOND;
    this.countries = options.countries ?? 'all';
  }

  /** Through the process's bind: only a worker has one; anywhere else nothing is sent. */
  async submit(message: OutboundSms): Promise<SubmitOutcome> {
    const sessions = this.#sessions;
    if (!sessions)
      return { kind: 'failed', reason: 'SMPP binds are held by workers; this process has none' };
    return sessions.submit(this.#config, message);
  }

  /** Receipts come as deliver_sm on the bind (recorded by the worker), never to the webhook. */
  parseReceipt(): ReceiptParse {
    return SMPP_WEBHOOK_ANSWER;
  }
}
