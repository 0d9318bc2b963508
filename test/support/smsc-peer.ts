/**
 * A local SMSC speaking SMPP 3.4, on the `smpp` package's server side, holding Herald to the
 * protocol: it authenticates transceiver binds (a wrong system_id or password is ESME_RBINDFAIL),
 * answers submit_sm with increasing message ids, and keeps every part it accepted, decoded by the
 * package (GSM 03.38 for data_coding 0, UTF-16BE for 8) and reassembled from the concatenation
 * UDH, so tests assert exact content and counts. Anything that breaks the format Herald promises
 * (registered_delivery 1, TON/NPI, esm_class 0x40 with a UDH, part sizes) lands in `problems`.
 *
 * It sends delivery receipts as deliver_sm (text of SMPP 3.4 Appendix B and/or the TLVs), by
 * default DELIVRD for each message as soon as it is accepted, or as planned per recipient
 * (several, out of order, duplicated, late); sends replies (MO); answers enquire_link; and
 * misbehaves on request: throttling, a graceful unbind mid-run (later submit_sm answered
 * ESME_RINVBNDSTS and not kept), an abrupt drop mid-run (the PDU it read is not answered and not
 * kept), slow answers, refusals. It listens on 127.0.0.1, port 0.
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import smpp from 'smpp';

export const ESME = {
  ROK: 0x00,
  RINVBNDSTS: 0x04,
  RSYSERR: 0x08,
  RINVDSTADR: 0x0b,
  RBINDFAIL: 0x0d,
  RMSGQFUL: 0x14,
  RTHROTTLED: 0x58,
} as const;

const STATUS_NAMES = Object.fromEntries(
  Object.entries(smpp.errors).map(([name, value]) => [value, name]),
) as Record<number, string>;

/** message_state (0x0427) of each receipt stat Appendix B names. */
const MESSAGE_STATE: Record<string, number> = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIV: 5,
  ACCEPTD: 6,
  UNKNOWN: 7,
  REJECTD: 8,
};

const GSM_EXTENSION = new Set([...'\f^{}\\[~]|€']);

export interface PeerPart {
  messageId: string;
  /** Which TCP connection (1, 2, ...) carried it. */
  connection: number;
  to: string;
  destTon: number;
  destNpi: number;
  from: string;
  sourceTon: number;
  sourceNpi: number;
  dataCoding: number;
  esmClass: number;
  registeredDelivery: number;
  /**
   * `validity_period` as the smpp package decodes it (whole seconds), or null for the SMSC's
   * default.
   */
  validUntil: Date | null;
  udh: { reference: number; total: number; seq: number } | null;
  text: string;
}

export interface PeerMessage {
  /** The first part's id. */
  messageId: string;
  partIds: string[];
  connection: number;
  /** E.164, as Herald knows the recipient. */
  to: string;
  from: string;
  sourceTon: number;
  sourceNpi: number;
  dataCoding: number;
  text: string;
  submittedAt: Date;
}

export interface ReceiptStep {
  stat: string;
  err?: string;
  /** `done date`; default now. */
  doneAt?: Date;
  /** Waited before this receipt is sent (after the previous one's answer). */
  delayMs?: number;
  /** Appendix B text, the TLVs, or both (default). A stat without a message_state has no TLV. */
  format?: 'text' | 'tlv' | 'both';
  /** Which part's id the receipt names (1 = the message id). */
  part?: number;
}

export interface SmscPeerOptions {
  systemId: string;
  password: string;
  firstMessageId?: number;
  /** Receipts sent for every accepted message without a plan of its own; null sends none. */
  autoReceipts?: ReceiptStep[] | null;
}

interface PeerSession {
  session: smpp.Session;
  connection: number;
  bound: boolean;
  unbinding: boolean;
  /** Going away abruptly: nothing more is answered. */
  dropping: boolean;
  outstanding: number;
  deliveries: Map<number, Delivery>;
}

interface Delivery {
  options: Record<string, unknown>;
  connection?: number;
  resolve(status: number): void;
}

export interface BindAttempt {
  command: string;
  systemId: string;
  password: string;
  systemType: string;
  interfaceVersion: number;
  accepted: boolean;
  connection: number;
}

export interface SmscPeer {
  host: string;
  port: number;
  messages: PeerMessage[];
  parts: PeerPart[];
  /**
   * Parts read and accepted whose answer could not be written, their connection gone meanwhile:
   * not kept (Herald cannot know of them), yet they reached the SMSC, which may deliver them.
   */
  unanswered: Omit<PeerPart, 'messageId'>[];
  problems: string[];
  binds: BindAttempt[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** submit_sm answers by status name, e.g. { ESME_ROK: 10, ESME_RTHROTTLED: 3 }. */
  answered: Record<string, number>;
  /** unbind requests Herald sent (a graceful goodbye). */
  readonly unbinds: number;
  /** Sessions bound right now. */
  readonly bound: number;
  /** deliver_sm_resp statuses Herald answered, in order. */
  deliveryAnswers: number[];
  /** The most submit_sm a session held unanswered at once. */
  readonly maxOutstanding: number;
  /** Delays every submit_sm_resp. */
  responseDelayMs: number;
  /** Stops answering enquire_link (a dead link, seen from Herald). */
  ignoreEnquireLinks: boolean;
  autoReceipts: ReceiptStep[] | null;
  messagesTo(to: string): PeerMessage[];
  receiptsFor(to: string, steps: ReceiptStep[]): void;
  /** Answers submit_sm to this number with an error status. */
  refuse(to: string, status: number): void;
  /** Delays the answer to submit_sm to this number. */
  delayAnswer(to: string, ms: number): void;
  /**
   * Keeps a message to this number, and sends its receipts, as soon as it is read, before its
   * (maybe delayed) answer: receipts that overtake the submission's own answer.
   */
  receiptsBeforeAnswer(to: string): void;
  /** Answers the next `count` submit_sm with ESME_RTHROTTLED (or `status`). */
  throttle(count: number, status?: number): void;
  /** Once `parts` parts are kept: sends unbind instead of answering the next submit_sm. */
  unbindAfter(parts: number): void;
  /** Once `parts` parts are kept: destroys the connection on reading the next submit_sm. */
  dropAfter(parts: number): void;
  unbindAll(): void;
  sendReceipt(message: PeerMessage, step: ReceiptStep): Promise<number>;
  /** A reply from a handset; resolves to Herald's deliver_sm_resp status. */
  sendReply(reply: { from: string; to: string; text: string; dataCoding?: 0 | 8 }): Promise<number>;
  close(): Promise<void>;
}

/** `herald provider create` options for an SMPP provider that binds to `peer` as `account`. */
export function smppProviderOptions(peer: SmscPeer, account: SmscPeerOptions) {
  return {
    type: 'smpp',
    host: peer.host,
    port: String(peer.port),
    'system-id': account.systemId,
    password: account.password,
  };
}

/** `YYMMDDhhmm` in UTC. */
function receiptDate(date: Date): string {
  const iso = date.toISOString();
  return (
    iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16)
  );
}

function septets(text: string): number {
  let count = 0;
  for (const char of text) count += GSM_EXTENSION.has(char) ? 2 : 1;
  return count;
}

export async function startSmscPeer(options: SmscPeerOptions): Promise<SmscPeer> {
  const messages: PeerMessage[] = [];
  const parts: PeerPart[] = [];
  const unanswered: Omit<PeerPart, 'messageId'>[] = [];
  const problems: string[] = [];
  const binds: BindAttempt[] = [];
  const answered: Record<string, number> = {};
  const deliveryAnswers: number[] = [];
  const plans = new Map<string, ReceiptStep[]>();
  const refusals = new Map<string, number>();
  const answerDelays = new Map<string, number>();
  const receiptsFirst = new Set<string>();
  const assembling = new Map<string, Map<number, PeerPart>>();
  const sessions = new Set<PeerSession>();
  const outbox: Delivery[] = [];
  let nextId = options.firstMessageId ?? 1;
  let connections = 0;
  let maxOutstanding = 0;
  let throttleCount = 0;
  let throttleStatus: number = ESME.RTHROTTLED;
  let unbindAt: number | null = null;
  let dropAt: number | null = null;
  let unbinds = 0;

  const peer: SmscPeer = {
    host: '127.0.0.1',
    port: 0,
    messages,
    parts,
    unanswered,
    problems,
    binds,
    get connections() {
      return connections;
    },
    answered,
    get unbinds() {
      return unbinds;
    },
    get bound() {
      return [...sessions].filter((each) => each.bound).length;
    },
    deliveryAnswers,
    get maxOutstanding() {
      return maxOutstanding;
    },
    responseDelayMs: 0,
    ignoreEnquireLinks: false,
    autoReceipts: options.autoReceipts === undefined ? [{ stat: 'DELIVRD' }] : options.autoReceipts,
    messagesTo: (to) => messages.filter((message) => message.to === to),
    receiptsFor: (to, steps) => void plans.set(to, steps),
    refuse: (to, status) => void refusals.set(to, status),
    delayAnswer: (to, ms) => void answerDelays.set(to, ms),
    receiptsBeforeAnswer: (to) => void receiptsFirst.add(to),
    throttle(count, status = ESME.RTHROTTLED) {
      throttleCount = count;
      throttleStatus = status;
    },
    unbindAfter(count) {
      unbindAt = count;
    },
    dropAfter(count) {
      dropAt = count;
    },
    unbindAll() {
      for (const peerSession of sessions) if (peerSession.bound) unbind(peerSession);
    },
    sendReceipt: (message, step) => deliver(receiptPdu(message, step), message.connection),
    sendReply: (reply) =>
      deliver({
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: reply.from.replace(/^\+/, ''),
        dest_addr_ton: /^\+?\d+$/.test(reply.to) ? 1 : 5,
        dest_addr_npi: /^\+?\d+$/.test(reply.to) ? 1 : 0,
        destination_addr: reply.to.replace(/^\+/, ''),
        esm_class: 0,
        data_coding: reply.dataCoding ?? 0,
        // The package encodes a string per data_coding: GSM 03.38 for 0, UTF-16BE for 8.
        short_message: reply.text,
      }),
    close: async () => {
      for (const peerSession of sessions) peerSession.session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function count(status: number) {
    const name = STATUS_NAMES[status] ?? `0x${status.toString(16)}`;
    answered[name] = (answered[name] ?? 0) + 1;
  }

  function receiptPdu(message: PeerMessage, step: ReceiptStep): Record<string, unknown> {
    const id = message.partIds[(step.part ?? 1) - 1] ?? message.messageId;
    const format = step.format ?? 'both';
    const stat = step.stat;
    const text =
      `id:${id} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} ` +
      `submit date:${receiptDate(message.submittedAt)} done date:${receiptDate(step.doneAt ?? new Date())} ` +
      `stat:${stat} err:${step.err ?? '000'} text:${message.text.slice(0, 20).replace(/[^\x20-\x7e]/g, '?')}`;
    const state = MESSAGE_STATE[stat];
    return {
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: message.to.replace(/^\+/, ''),
      dest_addr_ton: message.sourceTon,
      dest_addr_npi: message.sourceNpi,
      destination_addr: message.from,
      esm_class: 0x04,
      data_coding: 0,
      // Appendix B text is ASCII: octets as they are, not GSM septets.
      short_message: format === 'tlv' ? Buffer.alloc(0) : Buffer.from(text, 'latin1'),
      ...(format !== 'text' ? { receipted_message_id: id } : {}),
      ...(format !== 'text' && state !== undefined ? { message_state: state } : {}),
    };
  }

  /** Sends a deliver_sm on a bound session, now or once one binds; resolves to its answer. */
  function deliver(pduOptions: Record<string, unknown>, connection?: number): Promise<number> {
    return new Promise((resolve) => {
      outbox.push({ options: pduOptions, connection, resolve });
      flush();
    });
  }

  /** Receipts go back over the connection that took the message while it is bound, else any. */
  function flush() {
    const bound = [...sessions]
      .reverse()
      .filter((each) => each.bound && !each.unbinding && !each.dropping);
    if (bound.length === 0) return;
    for (const delivery of outbox.splice(0)) {
      const target =
        bound.find((each) => each.connection === delivery.connection) ?? (bound[0] as PeerSession);
      const pdu = new smpp.PDU('deliver_sm', delivery.options);
      const sent = target.session.send(pdu, (response) => {
        target.deliveries.delete(pdu.sequence_number);
        deliveryAnswers.push(response.command_status);
        delivery.resolve(response.command_status);
      });
      if (sent) target.deliveries.set(pdu.sequence_number, delivery);
      else outbox.push(delivery);
    }
  }

  async function sendPlannedReceipts(message: PeerMessage) {
    const steps = plans.get(message.to) ?? peer.autoReceipts;
    if (!steps) return;
    for (const step of steps) {
      if (step.delayMs) await sleep(step.delayMs);
      await peer.sendReceipt(message, step);
    }
  }

  function unbind(peerSession: PeerSession) {
    peerSession.unbinding = true;
    peerSession.session.send(new smpp.PDU('unbind'));
  }

  function keep(part: PeerPart) {
    parts.push(part);
    if (!part.udh) {
      complete([part]);
      return;
    }
    const key = `${part.from}|${part.to}|${part.udh.reference}|${part.udh.total}`;
    const collected = assembling.get(key) ?? new Map<number, PeerPart>();
    if (collected.has(part.udh.seq)) problems.push(`part ${part.udh.seq} of ${key} sent twice`);
    collected.set(part.udh.seq, part);
    assembling.set(key, collected);
    if (collected.size === part.udh.total) {
      assembling.delete(key);
      complete([...collected.values()].sort((a, b) => (a.udh?.seq ?? 0) - (b.udh?.seq ?? 0)));
    }
  }

  function complete(ordered: PeerPart[]) {
    const first = ordered[0] as PeerPart;
    const message: PeerMessage = {
      messageId: first.messageId,
      partIds: ordered.map((part) => part.messageId),
      connection: first.connection,
      to: `+${first.to}`,
      from: first.from,
      sourceTon: first.sourceTon,
      sourceNpi: first.sourceNpi,
      dataCoding: first.dataCoding,
      text: ordered.map((part) => part.text).join(''),
      submittedAt: new Date(),
    };
    messages.push(message);
    void sendPlannedReceipts(message);
  }

  /** Checks a submit_sm against what Herald promises; returns the part, or null if unreadable. */
  function readSubmit(pdu: smpp.PDU, connection: number): Omit<PeerPart, 'messageId'> | null {
    const field = (name: string) => pdu[name] as number;
    const to = String(pdu.destination_addr ?? '');
    const from = String(pdu.source_addr ?? '');
    const short = pdu.short_message as { udh?: Buffer[]; message?: unknown } | undefined;
    const text = typeof short?.message === 'string' ? short.message : null;
    if (text === null) {
      problems.push(`submit_sm to ${to}: short_message not decodable`);
      return null;
    }
    if (field('registered_delivery') !== 1)
      problems.push(`submit_sm to ${to}: registered_delivery ${field('registered_delivery')}`);
    if (field('dest_addr_ton') !== 1 || field('dest_addr_npi') !== 1 || !/^[1-9]\d{1,14}$/.test(to))
      problems.push(
        `destination ${to} TON/NPI ${field('dest_addr_ton')}/${field('dest_addr_npi')}`,
      );
    const sourceTon = field('source_addr_ton');
    const sourceNpi = field('source_addr_npi');
    const alphanumeric = sourceTon === 5 && sourceNpi === 0 && /^[A-Za-z0-9 ]{1,11}$/.test(from);
    const international = sourceTon === 1 && sourceNpi === 1 && /^[1-9]\d{1,14}$/.test(from);
    const empty = sourceTon === 0 && sourceNpi === 0 && from === '';
    if (!alphanumeric && !international && !empty)
      problems.push(`source ${from} TON/NPI ${sourceTon}/${sourceNpi}`);
    const validity = pdu.validity_period as unknown;
    const validUntil = validity instanceof Date ? validity : null;
    if (validity && !(validUntil && Number.isFinite(validUntil.getTime())))
      problems.push(`submit_sm to ${to}: validity_period ${String(validity)}`);
    const dataCoding = field('data_coding');
    if (dataCoding !== 0 && dataCoding !== 8) problems.push(`data_coding ${dataCoding}`);
    const esmClass = field('esm_class');
    let udh: PeerPart['udh'] = null;
    if (short?.udh) {
      const concat = short.udh.filter((element) => element[0] === 0x00);
      const element = concat[0];
      if (short.udh.length !== 1 || !element || element.length !== 5 || element[1] !== 3)
        problems.push(`UDH ${short.udh.map((each) => each.toString('hex')).join(',')}`);
      else {
        udh = {
          reference: element[2] as number,
          total: element[3] as number,
          seq: element[4] as number,
        };
        if (udh.total < 2 || udh.seq < 1 || udh.seq > udh.total)
          problems.push(`UDH part ${udh.seq} of ${udh.total}`);
      }
    }
    if ((esmClass === 0x40) !== (udh !== null) || (esmClass & ~0x40) !== 0)
      problems.push(`esm_class 0x${esmClass.toString(16)} with${udh ? '' : 'out'} a UDH`);
    const size = dataCoding === 8 ? text.length : septets(text);
    const limit = dataCoding === 8 ? (udh ? 67 : 70) : udh ? 153 : 160;
    if (size > limit) problems.push(`part to ${to} holds ${size} units; ${limit} fit`);
    return {
      connection,
      to,
      destTon: field('dest_addr_ton'),
      destNpi: field('dest_addr_npi'),
      from,
      sourceTon,
      sourceNpi,
      dataCoding,
      esmClass,
      registeredDelivery: field('registered_delivery'),
      validUntil,
      udh,
      text,
    };
  }

  const server = smpp.createServer((session) => {
    connections++;
    session.socket.setNoDelay(true);
    const peerSession: PeerSession = {
      session,
      connection: connections,
      bound: false,
      unbinding: false,
      dropping: false,
      outstanding: 0,
      deliveries: new Map(),
    };
    sessions.add(peerSession);
    session.on('error', () => {});
    session.on('close', () => {
      sessions.delete(peerSession);
      // Receipts not answered go again on the next bind, as an SMSC keeps them.
      outbox.unshift(...peerSession.deliveries.values());
      peerSession.deliveries.clear();
      flush();
    });

    const onBind = (command: string) => (pdu: smpp.PDU) => {
      const attempt: BindAttempt = {
        command,
        systemId: String(pdu.system_id),
        password: String(pdu.password),
        systemType: String(pdu.system_type),
        interfaceVersion: pdu.interface_version as number,
        accepted: false,
        connection: peerSession.connection,
      };
      binds.push(attempt);
      if (command !== 'bind_transceiver') problems.push(`bound with ${command}`);
      if (attempt.interfaceVersion !== 0x34)
        problems.push(`interface_version 0x${attempt.interfaceVersion.toString(16)}`);
      if (attempt.systemId !== options.systemId || attempt.password !== options.password) {
        session.send(pdu.response({ command_status: ESME.RBINDFAIL }));
        return;
      }
      attempt.accepted = true;
      peerSession.bound = true;
      session.send(pdu.response({ system_id: 'HeraldTestSMSC' }));
      flush();
    };
    session.on('bind_transceiver', onBind('bind_transceiver'));
    session.on('bind_transmitter', onBind('bind_transmitter'));
    session.on('bind_receiver', onBind('bind_receiver'));

    session.on('enquire_link', (pdu: smpp.PDU) => {
      if (!peer.ignoreEnquireLinks && !peerSession.dropping) session.send(pdu.response());
    });
    session.on('unbind', (pdu: smpp.PDU) => {
      unbinds++;
      peerSession.bound = false;
      session.send(pdu.response());
      session.close();
    });
    session.on('unbind_resp', () => {
      peerSession.bound = false;
      session.close();
    });

    session.on('submit_sm', (pdu: smpp.PDU) => {
      const answer = (status: number, messageId = '') => {
        count(status);
        session.send(pdu.response(status ? { command_status: status } : { message_id: messageId }));
      };
      if (peerSession.dropping) return;
      if (!peerSession.bound || peerSession.unbinding) return answer(ESME.RINVBNDSTS);
      if (dropAt !== null && parts.length >= dropAt) {
        // Abrupt: this PDU and any after it are read and never answered, and not kept. The
        // answers already written get a moment to arrive before the socket is destroyed.
        dropAt = null;
        peerSession.dropping = true;
        setTimeout(() => session.destroy(), 100);
        return;
      }
      if (unbindAt !== null && parts.length >= unbindAt) {
        unbindAt = null;
        unbind(peerSession);
        return answer(ESME.RINVBNDSTS);
      }
      if (throttleCount > 0) {
        throttleCount--;
        return answer(throttleStatus);
      }
      const part = readSubmit(pdu, peerSession.connection);
      if (!part) return answer(ESME.RSYSERR);
      const refusal = refusals.get(`+${part.to}`);
      if (refusal !== undefined) return answer(refusal);
      peerSession.outstanding++;
      maxOutstanding = Math.max(maxOutstanding, peerSession.outstanding);
      // Kept (and receipted) at once when its receipts are to overtake the answer.
      const early = receiptsFirst.has(`+${part.to}`) ? String(nextId++) : null;
      if (early) keep({ ...part, messageId: early });
      const respond = () => {
        peerSession.outstanding--;
        // A PDU not answered before the connection went is not kept: Herald cannot know of it.
        if (peerSession.dropping || session.socket.destroyed || !session.socket.writable) {
          if (!early) unanswered.push(part);
          return;
        }
        const messageId = early ?? String(nextId++);
        count(ESME.ROK);
        const response = pdu.response({ message_id: messageId });
        // Kept once its answer is written: an answer lost with the socket leaves nothing kept.
        session.socket.write(response.toBuffer(), (error) => {
          if (early) return;
          if (error) unanswered.push(part);
          else keep({ ...part, messageId });
        });
      };
      const delay = answerDelays.get(`+${part.to}`) ?? peer.responseDelayMs;
      if (delay > 0) setTimeout(respond, delay);
      else respond();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer.port = (server.address() as AddressInfo).port;
  return peer;
}
