import type { Countries } from '../domain/phone.js';
import type {
  AdapterContext,
  DeliveryStatus,
  ProviderDefinition,
  StoredProvider,
  WebhookParser,
} from '../domain/provider-definition.js';
import type { SmppSessions } from './smpp/sessions.js';

export type {
  DeliveryReceipt,
  DeliveryStatus,
  InboundParse,
  InboundSms,
  ReceiptParse,
  ReceiptParser,
  ReceiptRequest,
} from '../domain/provider-definition.js';

/** What Herald asks of every SMS provider adapter (docs/contracts.md "Providers"). */

/**
 * An adapter that can write a message synchronously (SMPP) passes `write`: called, it writes at
 * once, so the caller chooses the instant (right after a write mark's COMMIT reached its socket,
 * activities/submission.ts). Not called, the adapter writes once `beforeWrite` resolved.
 */
export type BeforeWrite = (write?: WriteNow) => Promise<void>;

/** Writes one message at once; never throws. */
export interface WriteNow {
  (): void;
  /** Runs several of this adapter's writes as one write to the wire (one system call). */
  together(writes: WriteNow[]): void;
}

export interface OutboundSms {
  to: string;
  from: string | null;
  body: string;
  /** Deterministic per message: the same message always carries the same reference. */
  reference: string;
  callbackUrl: string | null;
  /** Not to be delivered after this (the message's validity period); providers that can, pass it on. */
  validUntil?: Date | null;
  /**
   * Awaited once, right before the message's first bytes are written to the provider (after any
   * wait inside the adapter: an SMPP window slot); the caller marks the message as possibly sent
   * there. When it throws, nothing is written and `submit` rejects with its error.
   */
  beforeWrite?: BeforeWrite;
  /**
   * Awaited with the provider's id once it accepted the message, before an adapter with a window
   * (SMPP) gives the message's slot to another: the caller records the acceptance there, so what
   * is marked and not recorded never exceeds the window. An adapter without one may skip it.
   */
  afterAccepted?: (providerMessageId: string) => Promise<void>;
}

/**
 * What one submission came to. An adapter answers `rejected` or `failed` only when the provider's
 * answer proves nothing was accepted; any answer that does not (an HTTP 5xx on create, a timeout
 * or a connection dropped after the request left) is `unknown`, which is never resent.
 */
export type SubmitOutcome =
  | { kind: 'accepted'; providerMessageId: string }
  /**
   * Permanent: this provider will never take the message. `optedOut`: the recipient opted out
   * at the provider itself (Twilio 21610: they replied STOP to that sender); the caller records
   * the opt-out for the workspace and does not fail over to another provider.
   */
  | { kind: 'rejected'; reason: string; optedOut?: true }
  /**
   * Retryable: nothing was accepted. `retryAfterMs`: the provider said when to try again
   * (Twilio 429 `Retry-After`, SMPP throttling), at most 60 s (providers/http-answers.ts); the caller does not
   * resubmit to this provider sooner, and one that cannot wait that long treats it as a failure
   * that stands (fail over, or fail).
   */
  | { kind: 'failed'; reason: string; retryAfterMs?: number }
  /** The provider may or may not have taken it (timeout, dropped connection, 5xx on create). */
  | { kind: 'unknown'; reason: string };

export type LookupOutcome = { found: true; providerMessageId: string } | { found: false };

/** What a provider says of an accepted message's delivery, asked when its receipt is overdue. */
export type DeliveryLookup =
  /** As a receipt would have said it: `at` is the provider's time for the status. */
  | { kind: 'final'; status: DeliveryStatus; errorCode: string | null; at: Date }
  /** Still on its way (queued, sent to the network, awaiting the handset). */
  | { kind: 'pending' }
  /** The provider does not know the message (any more). */
  | { kind: 'not_found' };

export interface SmsProvider extends WebhookParser {
  readonly slug: string;
  /** The provider type (simulator, twilio, smpp): a bounded name for metrics. */
  readonly vendor: string;
  readonly requiresSenderId: boolean;
  /** ISO 3166 alpha-2 codes of the destinations it takes, or `all` (any E.164 number). */
  readonly countries: Countries;
  /**
   * Submissions per second this provider takes, shared by every worker and campaign
   * (activities/throughput.ts); null when it sets no limit.
   */
  readonly messagesPerSecond: number | null;
  /** Every adapter awaits `message.beforeWrite` right before it writes anything (OutboundSms). */
  submit(message: OutboundSms): Promise<SubmitOutcome>;
  /**
   * Finds a submission by its reference, to settle an unknown outcome. Absent when the vendor
   * keeps no client reference: an unknown outcome there is counted as failed, never resent.
   */
  lookup?(reference: string): Promise<LookupOutcome>;
  /**
   * The delivery status of a message it accepted, for a receipt that never came
   * (activities/receipt-reconciliation.ts); throws when the provider cannot answer now. Absent
   * when the vendor offers no status lookup: such a message is given up as `unknown`.
   */
  deliveryStatus?(message: {
    providerMessageId: string;
    reference: string;
  }): Promise<DeliveryLookup>;
}

/** What a vendor's factory is given beside its record: in a worker, the process's SMPP binds. */
export interface VendorContext extends AdapterContext {
  /** Held by workers only; an SMPP adapter without them fails its submissions. */
  smppSessions?: SmppSessions;
}

/** A vendor folder's one export: its type, schemas, create fields and CLI usage, and factory. */
export interface VendorDefinition extends ProviderDefinition<SmsProvider> {
  create(record: StoredProvider, context: VendorContext): SmsProvider;
}
