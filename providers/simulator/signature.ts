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
