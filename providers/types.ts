/** What Herald asks of every SMS provider adapter (DESIGN.md "Providers"). */

export interface OutboundSms {
  to: string;
  from: string | null;
  body: string;
  /** Deterministic per message: the same message always carries the same reference. */
  reference: string;
  callbackUrl: string | null;
}

export type SubmitOutcome =
  | { kind: 'accepted'; providerMessageId: string }
  /** Permanent: this provider will never take the message. */
  | { kind: 'rejected'; reason: string }
  /** Retryable: nothing was accepted. */
  | { kind: 'failed'; reason: string }
  /** The provider may or may not have taken it (timeout, dropped connection). */
  | { kind: 'unknown'; reason: string };

export type LookupOutcome = { found: true; providerMessageId: string } | { found: false };

export interface DeliveryReceipt {
  providerMessageId: string;
  reference: string | null;
  status: 'delivered' | 'undelivered';
  errorCode: string | null;
  at: Date;
}

export interface SmsProvider {
  readonly slug: string;
  readonly requiresSenderId: boolean;
  submit(message: OutboundSms): Promise<SubmitOutcome>;
  /** Finds a submission by its reference, to settle an unknown outcome. */
  lookup(reference: string): Promise<LookupOutcome>;
}
