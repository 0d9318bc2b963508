/**
 * SMPP 3.4 rules Herald applies, as pure functions: what a `command_status` means for a
 * submission, addresses (TON/NPI), delivery receipts (Appendix B text and the TLVs), and telling
 * receipts from replies in a `deliver_sm`.
 */
import { E164_ADDRESS } from '../../domain/phone.js';
import type { DeliveryStatus } from '../types.js';
import { decodeGsm7, decodeUcs2, gsmSeptets } from './encoding.js';

export const ESME_ROK = 0x00;
export const ESME_RINVBNDSTS = 0x04;
export const ESME_RSYSERR = 0x08;
export const ESME_RBINDFAIL = 0x0d;
export const ESME_RMSGQFUL = 0x14;
export const ESME_RTHROTTLED = 0x58;
/** "ESME Receiver Temporary App Error": answered to a deliver_sm Herald could not store yet. */
export const ESME_RX_T_APPN = 0x64;
export const ESME_RINVCMDID = 0x03;

/**
 * What Herald does with a non-zero `command_status` in a `submit_sm_resp` (or `generic_nack`):
 * - `throttled`: back off and resubmit on the same bind; `failed` once the back-off budget is spent.
 * - `rebind`: the SMSC does not consider the bind usable; resubmit on the next bind.
 * - `rejected`: permanent for this message; resending it unchanged cannot succeed.
 * - `failed`: nothing was accepted and a later attempt may succeed.
 * A status not listed is `failed`: the SMSC took nothing, and retrying it is harmless.
 *
 * Every non-zero status is proof that nothing was accepted, ESME_RSYSERR included: unlike an HTTP
 * 5xx, a submit_sm_resp is the SMSC's own answer to that very PDU (matched by sequence number, no
 * proxy in between), and SMPP 3.4 (§4.4.2) has it carry no message id when the status is not
 * ESME_ROK. What is ambiguous in SMPP is no answer at all (a timeout, a dropped bind after the
 * PDU was written): providers/smpp/client.ts makes those `unknown`.
 *
 * No SMPP 3.4 status means "the recipient opted out": the standard has none, and SMSCs that
 * report one use the vendor-specific range (0x400-0x4FF) with meanings that differ per vendor.
 * Such a status is `failed` here; an opt-out over SMPP arrives as a STOP reply (deliver_sm).
 */
export type StatusClass = 'throttled' | 'rebind' | 'rejected' | 'failed';

export const COMMAND_STATUSES: Record<
  number,
  { name: string; description: string; class: StatusClass }
> = {
  1: { name: 'ESME_RINVMSGLEN', description: 'message length is invalid', class: 'rejected' },
  2: { name: 'ESME_RINVCMDLEN', description: 'command length is invalid', class: 'rejected' },
  3: { name: 'ESME_RINVCMDID', description: 'invalid command id', class: 'rejected' },
  4: {
    name: 'ESME_RINVBNDSTS',
    description: 'incorrect bind status for the command',
    class: 'rebind',
  },
  5: { name: 'ESME_RALYBND', description: 'already bound', class: 'failed' },
  6: { name: 'ESME_RINVPRTFLG', description: 'invalid priority flag', class: 'rejected' },
  7: {
    name: 'ESME_RINVREGDLVFLG',
    description: 'invalid registered delivery flag',
    class: 'rejected',
  },
  8: { name: 'ESME_RSYSERR', description: 'system error', class: 'failed' },
  10: { name: 'ESME_RINVSRCADR', description: 'invalid source address', class: 'rejected' },
  11: {
    name: 'ESME_RINVDSTADR',
    description: 'invalid destination address',
    class: 'rejected',
  },
  13: { name: 'ESME_RBINDFAIL', description: 'bind failed', class: 'failed' },
  14: { name: 'ESME_RINVPASWD', description: 'invalid password', class: 'failed' },
  15: { name: 'ESME_RINVSYSID', description: 'invalid system id', class: 'failed' },
  20: { name: 'ESME_RMSGQFUL', description: 'message queue full', class: 'throttled' },
  21: { name: 'ESME_RINVSERTYP', description: 'invalid service type', class: 'rejected' },
  67: { name: 'ESME_RINVESMCLASS', description: 'invalid esm_class', class: 'rejected' },
  69: { name: 'ESME_RSUBMITFAIL', description: 'submit_sm failed', class: 'failed' },
  72: { name: 'ESME_RINVSRCTON', description: 'invalid source TON', class: 'rejected' },
  73: { name: 'ESME_RINVSRCNPI', description: 'invalid source NPI', class: 'rejected' },
  80: { name: 'ESME_RINVDSTTON', description: 'invalid destination TON', class: 'rejected' },
  81: { name: 'ESME_RINVDSTNPI', description: 'invalid destination NPI', class: 'rejected' },
  83: { name: 'ESME_RINVSYSTYP', description: 'invalid system_type', class: 'failed' },
  88: {
    name: 'ESME_RTHROTTLED',
    description: 'throttling error: the ESME exceeded its message limits',
    class: 'throttled',
  },
  97: { name: 'ESME_RINVSCHED', description: 'invalid scheduled delivery time', class: 'rejected' },
  98: { name: 'ESME_RINVEXPIRY', description: 'invalid validity period', class: 'rejected' },
  99: { name: 'ESME_RINVDFTMSGID', description: 'invalid predefined message', class: 'rejected' },
  100: { name: 'ESME_RX_T_APPN', description: 'temporary application error', class: 'failed' },
  101: { name: 'ESME_RX_P_APPN', description: 'permanent application error', class: 'rejected' },
  102: {
    name: 'ESME_RX_R_APPN',
    description: 'the SMSC rejected the message',
    class: 'rejected',
  },
  192: { name: 'ESME_RINVTLVSTREAM', description: 'invalid TLV stream', class: 'rejected' },
  193: { name: 'ESME_RTLVNOTALLWD', description: 'TLV not allowed', class: 'rejected' },
  194: { name: 'ESME_RINVTLVLEN', description: 'invalid TLV length', class: 'rejected' },
  195: { name: 'ESME_RMISSINGTLV', description: 'expected TLV missing', class: 'rejected' },
  196: { name: 'ESME_RINVTLVVAL', description: 'invalid TLV value', class: 'rejected' },
  254: { name: 'ESME_RDELIVERYFAILURE', description: 'delivery failure', class: 'failed' },
  255: { name: 'ESME_RUNKNOWNERR', description: 'unknown error', class: 'failed' },
};

export function statusClass(status: number): StatusClass {
  return COMMAND_STATUSES[status]?.class ?? 'failed';
}

/** e.g. `ESME_RINVDSTADR (0x0000000B, invalid destination address)`. */
export function describeStatus(status: number): string {
  const hex = `0x${status.toString(16).toUpperCase().padStart(8, '0')}`;
  const known = COMMAND_STATUSES[status];
  return known ? `${known.name} (${hex}, ${known.description})` : `command_status ${hex}`;
}

export interface SmppAddress {
  ton: number;
  npi: number;
  addr: string;
}

/**
 * TON/NPI of an address: international/ISDN (1/1) for an E.164 number, sent without its `+` (also
 * for 9-15 digits without it); alphanumeric (5/0) for a sender name; a short code of 3-8 digits is
 * network-specific (3/0); other digits (a national number) are unknown/ISDN (0/1), for the SMSC to
 * read; none is 0/0 (the SMSC fills in the account's default).
 */
export function smppAddress(value: string | null | undefined): SmppAddress {
  if (!value) return { ton: 0, npi: 0, addr: '' };
  if (E164_ADDRESS.test(value)) return { ton: 1, npi: 1, addr: value.slice(1) };
  if (/^\d{3,8}$/.test(value)) return { ton: 3, npi: 0, addr: value };
  if (/^[1-9]\d{8,14}$/.test(value)) return { ton: 1, npi: 1, addr: value };
  if (/^\d+$/.test(value)) return { ton: 0, npi: 1, addr: value };
  return { ton: 5, npi: 0, addr: value };
}

/**
 * The E.164 form of an address the SMSC sent: international TON, or unknown TON with a full
 * international number (8-15 digits, no leading 0); anything else as it came.
 */
export function e164Of(address: { ton: number; addr: string }): string {
  if (address.addr.startsWith('+')) return address.addr;
  if (/^[1-9]\d{7,14}$/.test(address.addr) && (address.ton === 1 || address.ton === 0))
    return `+${address.addr}`;
  return address.addr;
}

// ---- Delivery receipts --------------------------------------------------------------------

/** A receipt's `stat` → Herald's status; `ignored` is an intermediate state, recorded nowhere. */
export type ReceiptOutcome = DeliveryStatus | 'ignored';

const STAT: Record<string, ReceiptOutcome> = {
  DELIVRD: 'delivered',
  UNDELIV: 'undelivered',
  EXPIRED: 'undelivered',
  REJECTD: 'undelivered',
  DELETED: 'undelivered',
  ACCEPTD: 'ignored',
  ENROUTE: 'ignored',
};

/** DELIVRD is delivered; UNDELIV, EXPIRED, REJECTD, DELETED undelivered; ACCEPTD, ENROUTE on the way; anything else (UNKNOWN too) unknown. */
export function receiptOutcome(stat: string): ReceiptOutcome {
  return STAT[stat.toUpperCase()] ?? 'unknown';
}

/** The `message_state` TLV (0x0427) in the `stat` words of Appendix B. */
export const MESSAGE_STATE_STAT: Record<number, string> = {
  0: 'SCHEDULED',
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
  9: 'SKIPPED',
};

export interface ReceiptText {
  id: string | null;
  sub: string | null;
  dlvrd: string | null;
  submitDate: string | null;
  doneDate: string | null;
  stat: string | null;
  err: string | null;
  text: string | null;
}

function field(text: string, name: string): string | null {
  const match = new RegExp(`(?:^|\\s)${name}:(\\S*)`, 'i').exec(text);
  return match?.[1] ? match[1] : null;
}

/**
 * The receipt text of SMPP 3.4 Appendix B:
 * `id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...`.
 * Field names are matched without regard to case; missing fields are null.
 */
export function parseReceiptText(text: string): ReceiptText {
  const rest = /(?:^|\s)text:(.*)$/is.exec(text);
  const head = rest ? text.slice(0, rest.index) : text;
  return {
    id: field(head, 'id'),
    sub: field(head, 'sub'),
    dlvrd: field(head, 'dlvrd'),
    submitDate: field(head, 'submit date'),
    doneDate: field(head, 'done date'),
    stat: field(head, 'stat'),
    err: field(head, 'err'),
    text: rest?.[1] ?? null,
  };
}

/**
 * `YYMMDDhhmm` or `YYMMDDhhmmss`, read as UTC (Appendix B gives no zone; SMSCs differ, and UTC is
 * the only reading that does not depend on where Herald runs). Null when it is not a valid time.
 */
export function parseReceiptDate(value: string | null): Date | null {
  const match = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?$/.exec(value ?? '');
  if (!match) return null;
  const [, yy, mm, dd, hh, mi, ss] = match.map(Number) as number[];
  const date = new Date(
    Date.UTC(2000 + (yy as number), (mm as number) - 1, dd, hh, mi, Number.isNaN(ss) ? 0 : ss),
  );
  // Date.UTC rolls 31 February over into March: such a time is invalid, not March.
  if (
    date.getUTCMonth() !== (mm as number) - 1 ||
    date.getUTCDate() !== dd ||
    (hh as number) > 23 ||
    (mi as number) > 59 ||
    (!Number.isNaN(ss) && (ss as number) > 59)
  )
    return null;
  return date;
}

// ---- deliver_sm -------------------------------------------------------------------------

/** `esm_class` message type bits (2-5): 0x04 is an SMSC delivery receipt, 0x20 an intermediate notification. */
const MESSAGE_TYPE_MASK = 0x3c;
const DELIVERY_RECEIPT = 0x04;
const INTERMEDIATE_NOTIFICATION = 0x20;

/** The fields of a decoded `deliver_sm` Herald reads (as the smpp library presents them). */
export interface DeliverSmFields {
  esm_class?: number;
  data_coding?: number | null;
  source_addr?: string;
  source_addr_ton?: number;
  destination_addr?: string;
  short_message?: unknown;
  message_payload?: unknown;
  receipted_message_id?: string;
  message_state?: number;
  network_error_code?: Uint8Array;
}

export type DeliverSm =
  | {
      kind: 'receipt';
      providerMessageId: string;
      outcome: ReceiptOutcome;
      /** The receipt's own word for the state, e.g. DELIVRD or a vendor's. */
      stat: string;
      err: string | null;
      /** `done date`, or null when the receipt has none Herald can read. */
      doneAt: Date | null;
    }
  | { kind: 'reply'; from: string; to: string; body: string }
  /** A receipt Herald cannot tie to a message, or an SME acknowledgement: answered, not recorded. */
  | { kind: 'unusable'; reason: string };

/**
 * The text of a short message as the smpp library decoded it. The library reads data_coding 0
 * and 1 with the GSM 03.38 table; Herald reads receipts as ASCII (Appendix B), so for those it
 * turns the GSM characters back into their octets first.
 */
function messageText(value: unknown, dataCoding: number, asAscii: boolean): string {
  const message =
    value && typeof value === 'object' && 'message' in value
      ? (value as { message: unknown }).message
      : value;
  if (typeof message === 'string') {
    if (!asAscii || (dataCoding & 0x0f) > 1) return message;
    const octets = [...message].flatMap((char) => gsmSeptets(char) ?? [0x3f]);
    return Buffer.from(octets).toString('latin1');
  }
  if (message instanceof Uint8Array) {
    if (asAscii) return Buffer.from(message).toString('latin1');
    if (dataCoding === 0x08) return decodeUcs2(message);
    if (dataCoding === 0x03) return Buffer.from(message).toString('latin1');
    return decodeGsm7(message);
  }
  return '';
}

function bodyOf(fields: DeliverSmFields, asAscii: boolean): string {
  const dataCoding = fields.data_coding ?? 0;
  const short = messageText(fields.short_message, dataCoding, asAscii);
  return short || messageText(fields.message_payload, dataCoding, asAscii);
}

function networkError(code: Uint8Array | undefined): string | null {
  if (!code || code.length < 3) return null;
  const bytes = Buffer.from(code);
  return `${bytes.readUInt8(0)}:${bytes.readUInt16BE(1)}`;
}

/**
 * A receipt (esm_class 0x04, or an intermediate notification 0x20) or a reply from a handset
 * (no message type bits). The TLVs `receipted_message_id`, `message_state` and
 * `network_error_code` take precedence over the text's `id`, `stat` and `err` when present.
 */
export function parseDeliverSm(fields: DeliverSmFields): DeliverSm {
  const type = (fields.esm_class ?? 0) & MESSAGE_TYPE_MASK;
  if (type === DELIVERY_RECEIPT || type === INTERMEDIATE_NOTIFICATION) {
    const text = parseReceiptText(bodyOf(fields, true));
    const id = fields.receipted_message_id || text.id;
    const stat =
      fields.message_state !== undefined
        ? (MESSAGE_STATE_STAT[fields.message_state] ?? `STATE${fields.message_state}`)
        : text.stat;
    if (!id) return { kind: 'unusable', reason: 'a receipt without a message id' };
    if (!stat) return { kind: 'unusable', reason: `the receipt for ${id} has no state` };
    return {
      kind: 'receipt',
      providerMessageId: id,
      outcome: receiptOutcome(stat),
      stat: stat.toUpperCase(),
      err: text.err ?? networkError(fields.network_error_code),
      doneAt: parseReceiptDate(text.doneDate),
    };
  }
  if (type !== 0) return { kind: 'unusable', reason: `esm_class 0x${type.toString(16)}` };
  return {
    kind: 'reply',
    from: e164Of({ ton: fields.source_addr_ton ?? 0, addr: fields.source_addr ?? '' }),
    to: fields.destination_addr ?? '',
    body: bodyOf(fields, false),
  };
}

/**
 * The error code kept with a receipt that is not `delivered`: its stat and, when given, its err,
 * e.g. `UNDELIV:012`, `EXPIRED:000`, or `FOOBAR:000` for a state Herald cannot map.
 */
export function receiptErrorCode(stat: string, err: string | null): string {
  return (err ? `${stat}:${err}` : stat).slice(0, 64);
}
