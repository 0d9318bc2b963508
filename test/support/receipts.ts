import { inject } from 'vitest';
import { simulatorCredential } from '../../providers/registry.js';
import {
  RECEIPT_SIGNATURE_HEADER,
  type ReceiptFields,
  signReceipt,
} from '../../providers/simulator/signature.js';

/**
 * The signature header a simulator-protocol provider sends with `receipt` for a message of
 * workspace provider `slug`: signed with the credential Herald submitted the message with.
 */
export function receiptSignature(
  workspaceId: number,
  slug: string,
  receipt: ReceiptFields,
): Record<string, string> {
  const credential = simulatorCredential(inject('secret'), workspaceId, slug);
  return { [RECEIPT_SIGNATURE_HEADER]: signReceipt(credential, receipt) };
}
