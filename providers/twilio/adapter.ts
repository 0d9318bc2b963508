import { z } from 'zod';
import type { Countries } from '../../domain/phone.js';
import { notSentCode, rateLimited } from '../http-answers.js';
import type {
  DeliveryLookup,
  DeliveryStatus,
  InboundParse,
  OutboundSms,
  ReceiptParse,
  ReceiptRequest,
  SmsProvider,
  SubmitOutcome,
} from '../types.js';
import { type FormParams, verifyTwilioSignature } from './signature.js';

export const TWILIO_API_URL = 'https://api.twilio.com';
const SUBMIT_TIMEOUT_MS = 10_000;
/** Twilio's ceiling for ValidityPeriod: 10 hours. */
const MAX_VALIDITY_PERIOD_S = 36_000;

/** Stored encrypted in providers.credentials. */
export const twilioCredentials = z.object({
  account_sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/),
  auth_token: z.string().min(1),
});
export type TwilioCredentials = z.infer<typeof twilioCredentials>;

/** Non-secret settings in providers.settings; one of `from`, `messaging_service_sid` is set. */
export const twilioSettings = z.object({
  base_url: z.string().optional(),
  from: z.string().optional(),
  messaging_service_sid: z.string().optional(),
});
export type TwilioSettings = z.infer<typeof twilioSettings>;

/**
 * Twilio queues what exceeds a sender's rate itself, for up to 4 hours; Herald paces to this so
 * the queue never builds (a short code or a Messaging Service takes ~100/s; set lower for long codes).
 */
export const TWILIO_DEFAULT_MESSAGES_PER_SECOND = 100;

export interface TwilioOptions extends TwilioCredentials, TwilioSettings {
  requiresSenderId?: boolean;
  messagesPerSecond?: number | null;
  countries?: Countries;
  timeoutMs?: number;
}

/** Twilio's error body (https://www.twilio.com/docs/usage/twilios-response#response-formats-exceptions). */
interface TwilioError {
  code?: number;
  message?: string;
  more_info?: string;
  status?: number;
}

/** Statuses Twilio reports on the way to a final one; a callback with these records nothing. */
const IN_FLIGHT = new Set(['accepted', 'scheduled', 'queued', 'sending', 'sent']);

/** Twilio's MessageStatus → Herald's. Anything not listed here or in IN_FLIGHT is `unknown`. */
const FINAL: Record<string, DeliveryStatus> = {
  delivered: 'delivered',
  // WhatsApp/RCS read receipts come after delivery.
  read: 'delivered',
  undelivered: 'undelivered',
  failed: 'undelivered',
};

/** Twilio's word for a message's status → Herald's receipt status and error code; null while in flight. */
function deliveryOf(
  messageStatus: string,
  errorCode: string | null,
): { status: DeliveryStatus; errorCode: string | null } | null {
  const rawStatus = messageStatus.toLowerCase();
  if (IN_FLIGHT.has(rawStatus)) return null;
  const status = FINAL[rawStatus] ?? 'unknown';
  return {
    status,
    // An unmapped status is kept as unknown, with Twilio's own word for it.
    errorCode:
      status === 'delivered'
        ? null
        : errorCode || (status === 'unknown' ? `twilio:${rawStatus}`.slice(0, 64) : null),
  };
}

/** A fetched Message resource: what the status lookup needs of it. */
const fetchedMessage = z.object({
  sid: z.string(),
  status: z.string().min(1),
  error_code: z.union([z.number(), z.string()]).nullish(),
  /** RFC 2822, e.g. "Thu, 24 Aug 2023 05:01:45 +0000". */
  date_updated: z.string().nullish(),
});

const statusCallback = z.object({
  MessageSid: z.string().min(1),
  MessageStatus: z.string().min(1),
  ErrorCode: z.string().optional(),
});

/** An incoming message webhook (https://www.twilio.com/docs/messaging/guides/webhook-request). */
const incomingMessage = z.object({
  From: z.string().min(1),
  To: z.string().min(1),
  Body: z.string(),
  MessageSid: z.string().min(1).optional(),
});

/** "Attempt to send to unsubscribed recipient": the recipient replied STOP to this sender. */
const UNSUBSCRIBED_RECIPIENT = 21610;

/**
 * Twilio's answer to a create request, and what it proves
 * (https://www.twilio.com/docs/usage/twilios-response):
 *
 * | answer                                  | outcome                          |
 * | --------------------------------------- | -------------------------------- |
 * | 201 with a sid                          | accepted                         |
 * | 400 error 21610                         | rejected, optedOut               |
 * | any other 4xx but 408 and 429           | rejected (validated and refused) |
 * | 408 (the request never arrived whole)   | failed                           |
 * | 429                                     | failed, retryAfterMs (≤ 60 s)    |
 * | 500, 502, 503, 504, any 5xx             | unknown                          |
 * | 201 without a sid, any other 2xx or 3xx | unknown                          |
 * | connection refused, DNS (never sent)    | failed                           |
 * | timeout or reset after sending          | unknown                          |
 *
 * A 5xx is unknown because Twilio may have created the message before failing (the official
 * `twilio` client never retries one). That includes 503: one from an edge that never reached the
 * API would be safe to retry, but nothing in the answer tells it from one raised after the
 * message was created, so it is not resent either.
 */
function outcomeOf(status: number, error: TwilioError, headers: Headers): SubmitOutcome {
  const reason = describe(error, status);
  if (status === 429) return rateLimited(reason, headers);
  if (status === 408) return { kind: 'failed', reason };
  if (status >= 400 && status < 500)
    return error.code === UNSUBSCRIBED_RECIPIENT
      ? { kind: 'rejected', reason, optedOut: true }
      : { kind: 'rejected', reason };
  return { kind: 'unknown', reason };
}

function describe(error: TwilioError, status: number): string {
  const code = error.code ? `Twilio error ${error.code}` : `HTTP ${status}`;
  return error.message ? `${code}: ${error.message}` : code;
}

/**
 * Twilio's Programmable Messaging API: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`,
 * form-encoded, HTTP basic auth with AccountSid:AuthToken
 * (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource).
 * Status callbacks come back to the StatusCallback URL, signed with X-Twilio-Signature.
 *
 * It has no `lookup`: Twilio's Message resource has no client reference, idempotency key or
 * metadata field, and listing by To/From/DateSent cannot tell two messages to one number apart
 * without comparing bodies, which Herald will not do. An unknown outcome is counted as failed
 * rather than risk sending the message twice.
 */
export class TwilioProvider implements SmsProvider {
  readonly requiresSenderId: boolean;
  /** Any E.164 number unless configured; Twilio's own geo permissions refuse the rest (21408). */
  readonly countries: Countries;
  readonly messagesPerSecond: number;
  readonly #options: TwilioOptions;
  readonly #timeoutMs: number;
  readonly vendor = 'twilio';

  constructor(
    readonly slug: string,
    options: TwilioOptions,
  ) {
    if (!options.from && !options.messaging_service_sid)
      throw new Error(`provider ${slug} has neither a From number nor a MessagingServiceSid`);
    this.#options = options;
    this.requiresSenderId = options.requiresSenderId ?? false;
    this.messagesPerSecond = options.messagesPerSecond ?? TWILIO_DEFAULT_MESSAGES_PER_SECOND;
    this.countries = options.countries ?? 'all';
    this.#timeoutMs = options.timeoutMs ?? SUBMIT_TIMEOUT_MS;
  }

  /**
   * The message's own sender id is sent as `From` when it has one; else the provider's `From`,
   * else its `MessagingServiceSid` (Twilio then picks the sender from the service's pool).
   * The StatusCallback URL carries the message's reference, since Twilio's callback does not.
   */
  #form(message: OutboundSms): URLSearchParams {
    const form = new URLSearchParams({ To: message.to, Body: message.body });
    const from = message.from ?? this.#options.from;
    if (from) form.set('From', from);
    if (this.#options.messaging_service_sid)
      form.set('MessagingServiceSid', this.#options.messaging_service_sid);
    if (message.validUntil) {
      // Seconds Twilio may keep it queued, 1 to 36,000 (its maximum and default).
      const seconds = Math.ceil((message.validUntil.getTime() - Date.now()) / 1000);
      form.set('ValidityPeriod', String(Math.min(MAX_VALIDITY_PERIOD_S, Math.max(1, seconds))));
    }
    if (message.callbackUrl) {
      const callback = new URL(message.callbackUrl);
      callback.searchParams.set('ref', message.reference);
      form.set('StatusCallback', callback.toString());
    }
    return form;
  }

  async submit(message: OutboundSms): Promise<SubmitOutcome> {
    const { account_sid: accountSid, auth_token: authToken } = this.#options;
    const url = new URL(
      `/2010-04-01/Accounts/${accountSid}/Messages.json`,
      this.#options.base_url ?? TWILIO_API_URL,
    );
    const body = this.#form(message).toString();
    let response: Response;
    await message.beforeWrite?.();
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const code = notSentCode(error);
      if (code) return { kind: 'failed', reason: `network: ${code}` };
      // Timed out or dropped after the request may have reached Twilio.
      return { kind: 'unknown', reason: (error as Error).message };
    }
    let payload: { sid?: string } & TwilioError;
    try {
      payload = (await response.json()) as typeof payload;
    } catch {
      payload = {};
    }
    if (response.status === 201 && payload.sid)
      return { kind: 'accepted', providerMessageId: payload.sid };
    return outcomeOf(response.status, payload, response.headers);
  }

  #verified(request: ReceiptRequest): request is ReceiptRequest & { body: FormParams } {
    const params = request.body;
    if (typeof params !== 'object' || params === null) return false;
    const header = request.headers['x-twilio-signature'];
    const signature = Array.isArray(header) ? header[0] : header;
    return verifyTwilioSignature(
      this.#options.auth_token,
      signature,
      request.url,
      params as FormParams,
    );
  }

  /** A reply to one of the workspace's numbers, posted to the number's "A message comes in" URL. */
  parseInbound(request: ReceiptRequest): InboundParse {
    if (!this.#verified(request)) return { kind: 'forbidden' };
    const parsed = incomingMessage.safeParse(request.body);
    if (!parsed.success) return { kind: 'invalid', message: 'not a Twilio incoming message' };
    const { From, To, Body, MessageSid } = parsed.data;
    return {
      kind: 'inbound',
      message: { from: From, to: To, body: Body, providerMessageId: MessageSid ?? null },
    };
  }

  /**
   * A status callback: verified against X-Twilio-Signature, then mapped. Twilio's callbacks carry
   * no event timestamp, so the time Herald received it stands for the status's own time.
   */
  parseReceipt(request: ReceiptRequest): ReceiptParse {
    if (!this.#verified(request)) return { kind: 'forbidden' };
    const parsed = statusCallback.safeParse(request.body);
    if (!parsed.success) return { kind: 'invalid', message: 'not a Twilio status callback' };
    const { MessageSid, MessageStatus, ErrorCode } = parsed.data;
    const delivery = deliveryOf(MessageStatus, ErrorCode ?? null);
    if (!delivery) return { kind: 'ignored' };
    return {
      kind: 'receipt',
      receipt: {
        providerMessageId: MessageSid,
        reference: new URL(request.url).searchParams.get('ref'),
        ...delivery,
        at: new Date(),
      },
    };
  }

  /**
   * Fetches the Message resource by its sid
   * (https://www.twilio.com/docs/messaging/api/message-resource#fetch-a-message-resource) and maps
   * its status as a status callback's; `date_updated` stands for the status's time.
   */
  async deliveryStatus(message: { providerMessageId: string }): Promise<DeliveryLookup> {
    const { account_sid: accountSid, auth_token: authToken } = this.#options;
    const url = new URL(
      `/2010-04-01/Accounts/${accountSid}/Messages/${encodeURIComponent(message.providerMessageId)}.json`,
      this.#options.base_url ?? TWILIO_API_URL,
    );
    const response = await fetch(url, {
      headers: {
        authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
        accept: 'application/json',
      },
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    const payload: unknown = await response.json().catch(() => undefined);
    if (response.status === 404) return { kind: 'not_found' };
    const parsed = fetchedMessage.safeParse(payload);
    if (response.status !== 200 || !parsed.success)
      throw new Error(
        `status lookup failed: ${describe((payload ?? {}) as TwilioError, response.status)}`,
      );
    const fetched = parsed.data;
    const errorCode = fetched.error_code == null ? null : String(fetched.error_code);
    const delivery = deliveryOf(fetched.status, errorCode);
    if (!delivery) return { kind: 'pending' };
    const updated = fetched.date_updated ? new Date(fetched.date_updated) : undefined;
    const at = updated && !Number.isNaN(updated.getTime()) ? updated : new Date();
    return { kind: 'final', ...delivery, at };
  }
}
