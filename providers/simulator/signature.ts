import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries a receipt's signature (providers/simulator/README.md). */
export const RECEIPT_SIGNATURE_HEADER = 'x-simulator-signature';

/** The fields of a delivery receipt, as posted. */
export interface ReceiptFields {
  id: string;
  reference: string | null;
  status: string;
  error_code: string | null;
  at: string;
}

/**
 * `v1=<base64url HMAC-SHA256>` of the receipt's fields as one JSON array, in the order
 * `[id, reference, status, error_code, at]`, keyed with the credential the message was submitted
 * with. Signing the fields rather than the bytes lets the receiver verify what it parsed.
 */
export function signReceipt(credential: string, receipt: ReceiptFields): string {
  const signed = JSON.stringify([
    receipt.id,
    receipt.reference,
    receipt.status,
    receipt.error_code,
    receipt.at,
  ]);
  return `v1=${createHmac('sha256', credential).update(signed).digest('base64url')}`;
}

/** Whether `header` is the signature of `receipt` under `credential`; constant time. */
export function receiptSignatureMatches(
  credential: string,
  receipt: ReceiptFields,
  header: string,
): boolean {
  const expected = Buffer.from(signReceipt(credential, receipt));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The fields of an inbound message (a recipient's reply), as posted to the answered message's callback_url. */
export interface InboundFields {
  type: 'inbound';
  id: string;
  /** The reference of the message it answers. */
  reference: string;
  from: string;
  to: string;
  body: string;
  at: string;
}

/** As signReceipt, over `["inbound", id, reference, from, to, body, at]`. */
export function signInbound(credential: string, inbound: InboundFields): string {
  const signed = JSON.stringify([
    'inbound',
    inbound.id,
    inbound.reference,
    inbound.from,
    inbound.to,
    inbound.body,
    inbound.at,
  ]);
  return `v1=${createHmac('sha256', credential).update(signed).digest('base64url')}`;
}

export function inboundSignatureMatches(
  credential: string,
  inbound: InboundFields,
  header: string,
): boolean {
  const expected = Buffer.from(signInbound(credential, inbound));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
