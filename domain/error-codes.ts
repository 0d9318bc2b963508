/**
 * What a failed message's error means, in words: the code a provider's answer or receipt carries
 * (the simulator's, Twilio's, an SMSC's) and Herald's own. The console's "Failures by error" groups
 * by the code and shows these words beside it.
 */

export interface ErrorCode {
  /** What the failures are grouped by: `EC_ABSENT`, `21211`, `ESME_RINVDSTADR`, `UNDELIV:012`. */
  code: string;
  /** The code in words, or null for one this catalogue does not know. */
  meaning: string | null;
}

/** Receipt codes (the error_code of an `undelivered` receipt). */
const RECEIPT_CODES: Record<string, string> = {
  EC_ABSENT: 'the handset was unreachable',
  EC_SUBSCRIBER_ABSENT: 'the handset was unreachable',
  undeliverable: 'the provider could not deliver it',
  'herald:no_receipt': 'no receipt came in time',
  // Twilio (https://www.twilio.com/docs/api/errors).
  '30001': 'Twilio’s queue overflowed',
  '30002': 'the Twilio account is suspended',
  '30003': 'the handset was unreachable',
  '30004': 'the message was blocked',
  '30005': 'the number is unknown or no longer exists',
  '30006': 'a landline or a carrier that cannot take SMS',
  '30007': 'filtered by the carrier',
  '30008': 'an unknown error at the carrier',
  '30010': 'the price exceeded the set maximum',
  '30034': 'sent from an unregistered US number',
};

/** SMSC receipt states (`stat:` of a delivery receipt), the part before `:err`. */
const RECEIPT_STATES: Record<string, string> = {
  UNDELIV: 'the network could not deliver it',
  EXPIRED: 'its validity period ran out before delivery',
  REJECTD: 'the network rejected it',
  DELETED: 'it was deleted before delivery',
  UNKNOWN: 'the network did not know its state',
};

/** Twilio's errors on a send (`Twilio error NNNNN: …`). */
const TWILIO_SEND_CODES: Record<string, string> = {
  '20003': 'Twilio refused the credentials',
  '21211': 'the number is not a valid phone number',
  '21408': 'sending to this region is not enabled on the Twilio account',
  '21606': 'the sender cannot send SMS',
  '21610': 'the recipient replied STOP to this sender',
  '21612': 'the number cannot be reached by SMS from this sender',
  '21614': 'the number is not a mobile number',
  '21617': 'the message is too long',
};

/** Herald's own reasons and the simulator's answers (no code of their own). */
const SEND_REASONS: { pattern: RegExp; code: string; meaning: string }[] = [
  {
    pattern: /^validity period ended/,
    code: 'expired',
    meaning: 'its validity period ended before it could be submitted',
  },
  {
    pattern: /outcome unknown/,
    code: 'outcome_unknown',
    meaning: 'the provider’s answer never came; not sent again so it cannot go twice',
  },
  {
    pattern: /network: |connection refused/,
    code: 'network',
    meaning: 'the provider could not be reached',
  },
  { pattern: / rejected\.$/, code: 'rejected', meaning: 'the provider rejected the destination' },
  {
    pattern: /unavailable/i,
    code: 'unavailable',
    meaning: 'the provider was unavailable',
  },
  { pattern: /is not active$/, code: 'provider_inactive', meaning: 'the provider is disabled' },
  { pattern: /^no active provider$/, code: 'no_provider', meaning: 'no active provider took it' },
  {
    pattern: /^the recipient opted out/,
    code: 'opted_out',
    meaning: 'the recipient opted out after the send',
  },
  {
    pattern: /^the recipient was erased/,
    code: 'erased',
    meaning: 'the number was erased after the send',
  },
  {
    pattern: /^never dispatched/,
    code: 'lapsed',
    meaning: 'never dispatched before its validity period ended',
  },
  {
    pattern: /^orphan: /,
    code: 'orphan',
    meaning: 'saved twice for one Idempotency-Key; this copy was closed unsent',
  },
];

/** The code of an `undelivered` receipt, as stored (delivery_error_code), with its words. */
export function receiptErrorCode(stored: string): ErrorCode {
  const known = RECEIPT_CODES[stored];
  if (known) return { code: stored, meaning: known };
  const state = /^([A-Z]{5,7})(?::|$)/.exec(stored)?.[1];
  if (state && RECEIPT_STATES[state]) return { code: stored, meaning: RECEIPT_STATES[state] };
  const twilioStatus = /^twilio:(.+)$/.exec(stored)?.[1];
  if (twilioStatus)
    return { code: stored, meaning: `Twilio reported the status “${twilioStatus}”` };
  return { code: stored, meaning: null };
}

/**
 * The code of a message that failed to send, from its stored error (`<provider>: <reason>`):
 * Twilio's number, the SMSC's command status, an HTTP status, or one of Herald's reasons.
 * An error none of these fits is its own code: the caller groups those by their text.
 */
export function sendErrorCode(stored: string): ErrorCode | undefined {
  const twilio = /Twilio error (\d+)/.exec(stored)?.[1];
  if (twilio) return { code: twilio, meaning: TWILIO_SEND_CODES[twilio] ?? null };
  // `ESME_RINVDSTADR (0x0000000B, invalid destination address)`: the SMSC's words come with it.
  const smpp = /\b(ESME_[A-Z]+) \(0x[0-9A-F]+, ([^)]+)\)/.exec(stored);
  if (smpp?.[1]) return { code: smpp[1], meaning: smpp[2] ?? null };
  for (const reason of SEND_REASONS)
    if (reason.pattern.test(stored)) return { code: reason.code, meaning: reason.meaning };
  const http = /\bHTTP (\d{3})\b/.exec(stored)?.[1];
  if (http) return { code: `HTTP ${http}`, meaning: `the provider answered HTTP ${http}` };
  return undefined;
}
