/**
 * An erased number's opt-out (db/recipient-erasure.ts) is kept in opt_outs.recipient as a keyed
 * hash of the number, never the number: a later send to it is still refused, and nothing else can
 * be learnt from it without HERALD_SECRET. HMAC-SHA256 under the `recipient-hash` purpose key.
 */
import { createHmac } from 'node:crypto';
import { purposeKeys } from './keys.js';
import { keyedHash } from './tokens.js';

/** Marks the hashed form; no E.164 number starts so. */
const ERASED = 'erased:';

/** The form written now (under the newest key of HERALD_SECRET's ring). */
export function erasedRecipient(secret: string, e164: string): string {
  return `${ERASED}${keyedHash(secret, 'recipient-hash', e164).toString('base64url')}`;
}

/**
 * Every form an erased opt-out of `e164` may be stored under: one per key of HERALD_SECRET's ring,
 * newest first (the purpose is newer than the first, unkeyed-by-purpose scheme: nothing to match there).
 */
export function erasedRecipientForms(secret: string, e164: string): string[] {
  return purposeKeys(secret, 'recipient-hash').map(
    (key) => `${ERASED}${createHmac('sha256', key).update(e164).digest('base64url')}`,
  );
}

/**
 * The forms of a marketing send's recipients, each mapped to its number, for the opt-out check
 * (db/campaigns.ts insertCampaign); empty for a transactional send, which opt-outs do not stop.
 */
export function erasedOptOutForms(
  secret: string,
  purpose: 'transactional' | 'marketing',
  recipients: readonly string[],
): Map<string, string> {
  if (purpose !== 'marketing') return new Map();
  return new Map(
    recipients.flatMap((recipient) =>
      erasedRecipientForms(secret, recipient).map((form) => [form, recipient] as const),
    ),
  );
}
