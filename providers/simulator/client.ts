import { z } from 'zod';
import type { Countries } from '../../domain/phone.js';
import { notSentCode, rateLimited } from '../http-answers.js';
import { type JsonAnswer, requestJson } from '../json-http.js';
import type {
  DeliveryLookup,
  LookupOutcome,
  OutboundSms,
  ReceiptParse,
  ReceiptRequest,
  SmsProvider,
  SubmitOutcome,
} from '../types.js';
import {
  inboundSignatureMatches,
  RECEIPT_SIGNATURE_HEADER,
  receiptSignatureMatches,
} from './signature.js';

const SUBMIT_TIMEOUT_MS = 10_000;

/**
 * GET /v1/messages?reference=: what the lookups need of the simulator's answer. A simulator older
 * than the status's error code and time leaves them out.
 */
const lookupAnswerSchema = z.object({
  messages: z.array(
    z.object({
      id: z.string(),
      status: z.enum(['accepted', 'delivered', 'undelivered']).optional(),
      error_code: z.string().nullish(),
      status_at: z.iso.datetime({ offset: true }).nullish(),
    }),
  ),
});

/** The simulator's receipt body (providers/simulator/README.md). */
const receiptSchema = z.object({
  id: z.string(),
  reference: z.string().nullable(),
  status: z.enum(['delivered', 'undelivered']),
  error_code: z.string().nullable(),
  at: z.iso.datetime({ offset: true }),
});

/** A recipient's reply, posted to the callback_url of the message it answers (docs/providers.md, "Replies (two-way)"). */
const inboundSchema = z.object({
  type: z.literal('inbound'),
  id: z.string().min(1),
  reference: z.string().min(1),
  from: z.string().min(1),
  to: z.string().min(1),
  body: z.string(),
  at: z.iso.datetime({ offset: true }),
});

function invalidBody(error: z.ZodError): ReceiptParse {
  const [issue] = error.issues;
  return { kind: 'invalid', message: `${issue?.path.join('.') || 'body'}: ${issue?.message}` };
}

/** A reply signed as receipts are, over its own fields. */
function parseSimulatorInbound(body: unknown, header: string, credentials: readonly string[]) {
  const parsed = inboundSchema.safeParse(body);
  if (!parsed.success) return invalidBody(parsed.error);
  const inbound = parsed.data;
  if (!credentials.some((credential) => inboundSignatureMatches(credential, inbound, header)))
    return { kind: 'forbidden' } as const;
  return {
    kind: 'inbound',
    reference: inbound.reference,
    message: {
      from: inbound.from,
      to: inbound.to,
      body: inbound.body,
      providerMessageId: inbound.id,
    },
  } as const;
}

/**
 * A receipt from a simulator-protocol provider: JSON signed with the credential its message was
 * submitted with (providers/simulator/README.md), one of `credentials` (the current one and those
 * from before a HERALD_SECRET rotation); its own timestamp `at` is kept.
 * An unsigned receipt is refused before its body is read, a wrongly signed one once it is parsed.
 */
export function parseSimulatorReceipt(
  request: ReceiptRequest,
  credentials: readonly string[],
): ReceiptParse {
  const header = request.headers[RECEIPT_SIGNATURE_HEADER];
  if (typeof header !== 'string') return { kind: 'forbidden' };
  if ((request.body as { type?: unknown } | null)?.type === 'inbound')
    return parseSimulatorInbound(request.body, header, credentials);
  const parsed = receiptSchema.safeParse(request.body);
  if (!parsed.success) return invalidBody(parsed.error);
  const signed = credentials.some((credential) =>
    receiptSignatureMatches(credential, parsed.data, header),
  );
  if (!signed) return { kind: 'forbidden' };
  const receipt = parsed.data;
  return {
    kind: 'receipt',
    receipt: {
      providerMessageId: receipt.id,
      reference: receipt.reference,
      status: receipt.status,
      errorCode: receipt.error_code,
      at: new Date(receipt.at),
    },
  };
}

/**
 * The simulator's answer to `POST /v1/messages`, by its contract (providers/simulator/README.md):
 *
 * | answer                                   | outcome                       |
 * | ---------------------------------------- | ----------------------------- |
 * | 202 with an id                           | accepted                      |
 * | 503 `unavailable` (behaviour `fail`)     | failed: it stores nothing     |
 * | 429                                      | failed, retryAfterMs (≤ 60 s) |
 * | 408 (the request never arrived whole)    | failed                        |
 * | any other 4xx (`reject`, 422, 404)       | rejected                      |
 * | any other 5xx, a 503 without `unavailable`, any other 2xx or 3xx | unknown |
 * | timeout (behaviour `timeout`), reset     | unknown, settled by lookup    |
 *
 * Only the simulator's own `unavailable` proves nothing was stored; a 500 (an error after it
 * stored the message) or a proxy's 502/503/504 does not. Unknown outcomes are looked up by
 * reference, so they cost nothing here.
 */
function simulatorOutcome(
  status: number,
  error: { code?: string; message?: string } | undefined,
  headers: { get(name: string): string | null },
): SubmitOutcome {
  const reason = error?.message ?? `HTTP ${status}`;
  if (status === 503 && error?.code === 'unavailable') return { kind: 'failed', reason };
  if (status === 429) return rateLimited(reason, headers);
  if (status === 408) return { kind: 'failed', reason };
  if (status >= 400 && status < 500) return { kind: 'rejected', reason };
  return { kind: 'unknown', reason };
}

/** Adapter for the simulator's HTTP API (providers/simulator/README.md). */
export class SimulatorProvider implements SmsProvider {
  readonly requiresSenderId: boolean;
  readonly countries: Countries;
  /** The simulator sets no limit unless one is configured. */
  readonly messagesPerSecond: number | null;
  readonly vendor = 'simulator';

  constructor(
    readonly slug: string,
    private readonly baseUrl: string,
    options: {
      requiresSenderId?: boolean;
      timeoutMs?: number;
      messagesPerSecond?: number | null;
      countries?: Countries;
      /**
       * The credential sent with each submission (`Authorization: Bearer`), with which the
       * provider signs that message's receipts. Without one, every receipt is refused.
       */
      credential?: string;
      /** Credentials of earlier keys of the ring, whose messages' receipts still verify. */
      earlierCredentials?: readonly string[];
    } = {},
  ) {
    this.requiresSenderId = options.requiresSenderId ?? false;
    this.messagesPerSecond = options.messagesPerSecond ?? null;
    this.countries = options.countries ?? 'all';
    this.timeoutMs = options.timeoutMs ?? SUBMIT_TIMEOUT_MS;
    this.#credential = options.credential ?? null;
    this.#receiptCredentials = this.#credential
      ? [this.#credential, ...(options.earlierCredentials ?? [])]
      : [];
  }

  private readonly timeoutMs: number;
  readonly #credential: string | null;
  readonly #receiptCredentials: readonly string[];

  async submit(message: OutboundSms): Promise<SubmitOutcome> {
    let answer: JsonAnswer;
    await message.beforeWrite?.();
    try {
      answer = await requestJson(new URL('/v1/messages', this.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.#credential ? { authorization: `Bearer ${this.#credential}` } : {}),
        },
        body: JSON.stringify({
          to: message.to,
          from: message.from,
          body: message.body,
          reference: message.reference,
          callback_url: message.callbackUrl,
        }),
        timeoutMs: this.timeoutMs,
      });
    } catch (error) {
      // Refused or unresolved before anything was sent: nothing can have been accepted.
      const code = notSentCode(error);
      if (code === 'ECONNREFUSED') return { kind: 'failed', reason: 'connection refused' };
      if (code) return { kind: 'failed', reason: `network: ${code}` };
      return { kind: 'unknown', reason: (error as Error).message };
    }
    const payload = answer.body as { id?: string; error?: { code?: string; message?: string } };
    if (answer.status === 202 && payload.id)
      return { kind: 'accepted', providerMessageId: payload.id };
    return simulatorOutcome(answer.status, payload.error, { get: answer.header });
  }

  parseReceipt(request: ReceiptRequest): ReceiptParse {
    return this.#credential === null
      ? { kind: 'forbidden' }
      : parseSimulatorReceipt(request, this.#receiptCredentials);
  }

  /** The messages stored under `reference`, newest first. */
  async #byReference(reference: string) {
    const url = new URL('/v1/messages', this.baseUrl);
    url.searchParams.set('reference', reference);
    const answer = await requestJson(url, { method: 'GET', timeoutMs: this.timeoutMs });
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`lookup failed: HTTP ${answer.status}`);
    const parsed = lookupAnswerSchema.safeParse(answer.body);
    if (!parsed.success)
      throw new Error(`lookup failed: HTTP ${answer.status} without a message list`);
    return parsed.data.messages;
  }

  async lookup(reference: string): Promise<LookupOutcome> {
    const [first] = await this.#byReference(reference);
    return first ? { found: true, providerMessageId: first.id } : { found: false };
  }

  /** The same lookup by reference, narrowed to the message the provider accepted. */
  async deliveryStatus(message: {
    providerMessageId: string;
    reference: string;
  }): Promise<DeliveryLookup> {
    const stored = (await this.#byReference(message.reference)).find(
      (candidate) => candidate.id === message.providerMessageId,
    );
    if (!stored) return { kind: 'not_found' };
    if (stored.status === undefined || stored.status === 'accepted') return { kind: 'pending' };
    return {
      kind: 'final',
      status: stored.status,
      errorCode: stored.status === 'delivered' ? null : (stored.error_code ?? null),
      // Its time for the status when it says, else the time of asking.
      at: stored.status_at ? new Date(stored.status_at) : new Date(),
    };
  }
}
