import type { Countries } from '../domain/phone.js';

/** What Herald asks of every SMS provider adapter (DESIGN.md "Providers"). */

export interface OutboundSms {
  to: string;
  from: string | null;
  body: string;
  /** Deterministic per message: the same message always carries the same reference. */
  reference: string;
  callbackUrl: string | null;
  /** Not to be delivered after this (the message's validity period); providers that can, pass it on. */
  validUntil?: Date | null;
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

/** Herald's own delivery statuses; a vendor status it cannot map is kept as `unknown`. */
export type DeliveryStatus = 'delivered' | 'undelivered' | 'unknown';

export interface DeliveryReceipt {
  providerMessageId: string;
  reference: string | null;
  status: DeliveryStatus;
  errorCode: string | null;
  at: Date;
}

/** A delivery-receipt webhook as it reached `/webhooks/providers/<slug>`. */
export interface ReceiptRequest {
  /** The URL the provider called: PUBLIC_URL's origin + the path and query as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed body: JSON, or form fields (`application/x-www-form-urlencoded`). */
  body: unknown;
}

export type ReceiptParse =
  | { kind: 'receipt'; receipt: DeliveryReceipt }
  /** Authentic, but not a final status (e.g. Twilio's `sent`): acknowledged, nothing recorded. */
  | { kind: 'ignored' }
  /** The signature does not verify. */
  | { kind: 'forbidden' }
  | { kind: 'invalid'; message: string };

/** Verifies and parses the delivery receipts one provider posts. */
export interface ReceiptParser {
  parseReceipt(request: ReceiptRequest): ReceiptParse;
}

/** A message a recipient sent back (a mobile-originated reply), e.g. STOP or START. */
export interface InboundSms {
  from: string;
  to: string;
  body: string;
}

export type InboundParse =
  | { kind: 'inbound'; message: InboundSms }
  | { kind: 'forbidden' }
  | { kind: 'invalid'; message: string };

export interface SmsProvider extends ReceiptParser {
  readonly slug: string;
  readonly requiresSenderId: boolean;
  /** ISO 3166 alpha-2 codes of the destinations it takes, or `all` (any E.164 number). */
  readonly countries: Countries;
  /**
   * Submissions per second this provider takes, shared by every worker and campaign
   * (activities/throughput.ts); null when it sets no limit.
   */
  readonly messagesPerSecond: number | null;
  /** Verifies and parses a reply posted to `/webhooks/inbound/<workspace>/<slug>`, when the vendor posts them. */
  parseInbound?(request: ReceiptRequest): InboundParse;
  submit(message: OutboundSms): Promise<SubmitOutcome>;
  /**
   * Finds a submission by its reference, to settle an unknown outcome. Absent when the vendor
   * keeps no client reference: an unknown outcome there is counted as failed, never resent.
   */
  lookup?(reference: string): Promise<LookupOutcome>;
}
