import http from 'node:http';
import https from 'node:https';
import { DEFAULT_UNDELIVERED_CODE, type ReceiptRule } from './behaviour.js';
import {
  type InboundFields,
  RECEIPT_SIGNATURE_HEADER,
  type ReceiptFields,
  signInbound,
  signReceipt,
} from './signature.js';
import type { StoredMessage } from './store.js';

export interface ReceiptOptions {
  /** Total POST attempts per receipt (first try included). */
  attempts: number;
  /** Delay before the first retry; doubles on each further retry. */
  backoff_ms: number;
  /** Per-attempt request timeout. */
  request_timeout_ms: number;
}

const DEFAULTS: ReceiptOptions = { attempts: 4, backoff_ms: 200, request_timeout_ms: 5_000 };

/**
 * Settles stored messages after the rule's receipt delay and POSTs the delivery receipt
 * to their callback_url, retrying a bounded number of times. Nothing here ever throws
 * out of a timer, and `cancelAll()` stops every pending receipt and retry.
 */
export class ReceiptScheduler {
  readonly #options: ReceiptOptions;
  readonly #timers = new Set<NodeJS.Timeout>();
  // node:http with keep-alive: several times faster than fetch at thousands of receipts/s.
  readonly #http = new http.Agent({ keepAlive: true, maxSockets: 256 });
  readonly #https = new https.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(options: Partial<ReceiptOptions> = {}) {
    this.#options = { ...DEFAULTS, ...options };
  }

  schedule(message: StoredMessage, receipt: ReceiptRule): void {
    if (receipt.outcome === 'none') return;
    const status = receipt.outcome;
    const errorCode =
      status === 'undelivered' ? (receipt.error_code ?? DEFAULT_UNDELIVERED_CODE) : null;
    this.#later(receipt.delay_ms, () => {
      const at = new Date().toISOString();
      message.status = status;
      message.error_code = errorCode;
      message.status_at = at;
      if (!message.callback_url) return;
      const receipt: ReceiptFields = {
        id: message.id,
        reference: message.reference,
        status,
        error_code: errorCode,
        at,
      };
      // Signed with the submitter's credential (as Twilio signs with the account's auth token).
      const signature: Record<string, string> = message.credential
        ? { [RECEIPT_SIGNATURE_HEADER]: signReceipt(message.credential, receipt) }
        : {};
      this.#post(message.callback_url, JSON.stringify(receipt), signature, 1);
    });
  }

  /** POSTs a recipient's reply to the callback_url of the message it answers, retried as receipts are. */
  deliverInbound(message: StoredMessage, inbound: InboundFields): void {
    if (!message.callback_url) return;
    const signature: Record<string, string> = message.credential
      ? { [RECEIPT_SIGNATURE_HEADER]: signInbound(message.credential, inbound) }
      : {};
    this.#post(message.callback_url, JSON.stringify(inbound), signature, 1);
  }

  cancelAll(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  /** Cancels everything and drops pooled connections. */
  close(): void {
    this.cancelAll();
    this.#http.destroy();
    this.#https.destroy();
  }

  #post(url: string, payload: string, headers: Record<string, string>, attempt: number): void {
    this.#send(url, payload, headers)
      .then((status) => (status >= 200 && status < 300) || !retryable(status))
      .catch(() => false)
      .then((done) => {
        if (done || attempt >= this.#options.attempts) return;
        const wait = this.#options.backoff_ms * 2 ** (attempt - 1);
        this.#later(wait, () => this.#post(url, payload, headers, attempt + 1));
      })
      .catch(() => {});
  }

  /** POSTs JSON and resolves with the response status; rejects on network errors. */
  #send(url: string, payload: string, headers: Record<string, string>): Promise<number> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const request = (secure ? https : http).request(
        target,
        {
          method: 'POST',
          agent: secure ? this.#https : this.#http,
          timeout: this.#options.request_timeout_ms,
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (response) => {
          response.on('error', reject);
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.resume(); // drain, so the connection is reused
        },
      );
      request.on('timeout', () => request.destroy(new Error('receipt request timed out')));
      request.on('error', reject);
      request.end(payload);
    });
  }

  #later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      try {
        fn();
      } catch {
        // A receipt must never take the simulator down.
      }
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }
}

/** Network errors, 5xx, 408 and 429 are worth retrying; other 4xx are final. */
function retryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}
