/**
 * One SMPP 3.4 transceiver bind to an SMSC, kept up across drops, with a window of outstanding
 * `submit_sm`. Built on the `smpp` package's Session (framing and PDU codec); everything about
 * the bind's life is here:
 *
 * - Connects, binds as a transceiver (system_id, password, system_type, interface_version 0x34),
 *   and reconnects after a drop with back-off (250 ms, 1 s, 2 s, 5 s, 10 s, 30 s, then every 60 s).
 * - `enquire_link` every 30 s; no `enquire_link_resp` within 10 s means the bind is dead: the
 *   socket is destroyed and a new bind made. The SMSC's own enquire_link is answered.
 * - At most `window` `submit_sm` await their response; the others queue, in order, and wait for
 *   a free slot, also across a reconnect. A submission's `beforeWrite` runs once it holds a slot,
 *   right before its first write: until then nothing of it has left Herald, and a throw there
 *   frees the slot and writes nothing. Its `afterAccepted` runs on an ESME_ROK answer to its
 *   last part, before the slot is freed.
 * - ESME_RTHROTTLED and ESME_RMSGQFUL pause the bind's submissions (500 ms, 1, 2, 4, 8 s) and the
 *   PDU is sent again on the same bind; after the fifth back-off it fails, asking the caller to
 *   wait the last back-off (`retryAfterMs`) before it tries again.
 * - An SMSC `unbind` is answered with `unbind_resp`; nothing new is written, the responses still
 *   owed are collected, then the connection is closed and a new bind made. A `submit_sm`
 *   answered ESME_RINVBNDSTS was not accepted and goes again on the next bind.
 * - A dropped connection settles each PDU written to it and not answered as `unknown` (the SMSC
 *   may have it); PDUs still queued were never written and wait for the next bind, for up to
 *   `bindWaitMs`, then are `not-sent`.
 * - A bind the SMSC refuses (bind_resp with an error) fails every queued submission at once, and
 *   new ones until a bind succeeds: a wrong password does not make campaigns hang.
 */
import smpp from 'smpp';
import type { BeforeWrite, SubmitOutcome, WriteNow } from '../types.js';
import { encodeSms } from './encoding.js';
import {
  describeStatus,
  ESME_RINVCMDID,
  ESME_ROK,
  ESME_RX_T_APPN,
  type SmppAddress,
  smppAddress,
  statusClass,
} from './protocol.js';

export type SmppLog = (level: 'info' | 'warn', message: string) => void;

export interface SmppClientOptions {
  host: string;
  port: number;
  systemId: string;
  password: string;
  systemType?: string;
  /** Outstanding submit_sm at most; default 10. */
  window?: number;
  /** Names the bind in log lines (never the password). */
  label?: string;
  enquireLinkMs?: number;
  /** How long bind_resp, enquire_link_resp and unbind_resp may take. */
  responseTimeoutMs?: number;
  /** How long a submit_sm_resp may take before the outcome is unknown. */
  submitTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** How long a queued submission waits while there is no bind. */
  bindWaitMs?: number;
  /** How long a queued submission waits in all, bound or not. */
  maxQueueWaitMs?: number;
  reconnectDelaysMs?: number[];
  throttleDelaysMs?: number[];
  /** Resubmissions after ESME_RINVBNDSTS before the submission fails. */
  maxRebinds?: number;
  /** A `deliver_sm` (receipt or reply); resolves to the command_status of the deliver_sm_resp. */
  onDeliver?: (pdu: smpp.PDU) => Promise<number>;
  log?: SmppLog;
}

const DEFAULTS = {
  window: 10,
  enquireLinkMs: 30_000,
  responseTimeoutMs: 10_000,
  submitTimeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  bindWaitMs: 20_000,
  maxQueueWaitMs: 120_000,
  reconnectDelaysMs: [250, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000],
  throttleDelaysMs: [500, 1_000, 2_000, 4_000, 8_000],
  maxRebinds: 5,
};

/** What became of one submit_sm. */
export type PduResult =
  | { kind: 'response'; status: number; messageId: string }
  /** Written to the socket, never answered: the SMSC may have it. */
  | { kind: 'unknown'; reason: string }
  /**
   * Never written: nothing left Herald. `retryAfterMs`: it waited out the SMSC's throttling, and
   * a resubmission should wait this long too.
   */
  | { kind: 'not-sent'; reason: string; retryAfterMs?: number };

interface Job {
  params: Record<string, unknown>;
  /** Awaited in a window slot right before the first write; cleared once it has run. */
  beforeWrite?: BeforeWrite;
  /** Its submit_sm, encoded once (submitSm). */
  pdu?: smpp.PDU;
  /** Awaited with the message id of an ESME_ROK answer, still in the job's window slot. */
  afterAccepted?: (messageId: string) => Promise<void>;
  enqueuedAt: number;
  throttles: number;
  rebinds: number;
  /** The last status that sent it back to the queue, reported if it then runs out of time. */
  lastStatus: number | null;
  timer?: NodeJS.Timeout;
  settle(result: PduResult): void;
  /** `beforeWrite` threw: nothing was written, the submission rejects with its error. */
  withhold(error: unknown): void;
}

type ConnectionState = 'connecting' | 'binding' | 'bound' | 'unbinding' | 'closed';

interface Connection {
  session: smpp.Session;
  state: ConnectionState;
  /** Written submit_sm by sequence number. */
  inFlight: Map<number, Job>;
  /**
   * Window slots held by submissions not written (their `beforeWrite` running) or answered (their
   * `afterAccepted` running).
   */
  holding: number;
  /** deliver_sm being handled, still owed a response. */
  deliveries: number;
  /** Unbinding because Herald asked (it then sends unbind itself), not the SMSC. */
  ownUnbind: boolean;
  /** The unbind (or the close) is under way. */
  finishing: boolean;
  timers: Set<NodeJS.Timeout>;
  enquireTimer?: NodeJS.Timeout;
  enquirePending: boolean;
  /** The SMSC's unbind, answered once no deliver_sm is being handled. */
  unbindResponse?: smpp.PDU;
}

/**
 * SMPP 3.4 absolute time (§7.1.1), `YYMMDDhhmmsstnnp`, written in UTC: tenths 0, offset 00, `+`.
 * Some SMSCs take only whole seconds, so the tenths are always 0.
 */
export function smppAbsoluteTime(at: Date): string {
  const two = (value: number) => String(value).padStart(2, '0');
  return (
    two(at.getUTCFullYear() % 100) +
    two(at.getUTCMonth() + 1) +
    two(at.getUTCDate()) +
    two(at.getUTCHours()) +
    two(at.getUTCMinutes()) +
    two(at.getUTCSeconds()) +
    '000+'
  );
}

export interface SmppMessage {
  to: string;
  from: string | null;
  body: string;
  /** The SMSC gives up delivering after this. */
  validUntil?: Date | null;
}

export interface SmppSubmission {
  outcome: SubmitOutcome;
  /** Message ids of every part, in order, when all were accepted. */
  partIds: string[];
}

const DROPPED = 'the SMPP connection closed before the SMSC answered';

/**
 * Runs `writes` with the bind's socket corked: their PDUs leave in one system call (a writev),
 * so no kill can fall between two of them.
 */
function writeTogether(connection: Connection, writes: WriteNow[]) {
  const socket = connection.session.socket;
  socket.cork();
  try {
    for (const write of writes) write();
  } finally {
    socket.uncork();
  }
}

/** Where a PDU's header keeps its sequence number (SMPP 3.4 §3.2). */
const SEQUENCE_OFFSET = 12;

/**
 * The job's submit_sm, encoded on first use: each write takes only the session's next sequence
 * number, so a write right after a write mark's COMMIT does no encoding.
 */
function submitSm(job: Job): smpp.PDU {
  if (!job.pdu) {
    const pdu = new smpp.PDU('submit_sm', job.params);
    const encoded = pdu.toBuffer();
    pdu.toBuffer = () => {
      encoded.writeUInt32BE(pdu.sequence_number, SEQUENCE_OFFSET);
      return encoded;
    };
    job.pdu = pdu;
  }
  // Numbered by the session as it is written: a PDU written again gets a new number.
  job.pdu.sequence_number = 0;
  return job.pdu;
}

function timer(ms: number, callback: () => void): NodeJS.Timeout {
  const handle = setTimeout(callback, ms);
  handle.unref();
  return handle;
}

export class SmppClient {
  readonly #options: SmppClientOptions & typeof DEFAULTS;
  readonly #queue: Job[] = [];
  #connection: Connection | null = null;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #reconnectAttempt = 0;
  #sweepTimer: NodeJS.Timeout | undefined;
  #pumpTimer: NodeJS.Timeout | undefined;
  #pausedUntil = 0;
  #keepOpen = false;
  #closed = false;
  #lastError: string | null = null;
  /** Why the SMSC refused the last bind; cleared by a successful one. */
  #refusal: string | null = null;
  #reference = Math.floor(Math.random() * 256);
  #binds = 0;

  constructor(options: SmppClientOptions) {
    this.#options = { ...DEFAULTS, ...stripUndefined(options) } as SmppClientOptions &
      typeof DEFAULTS;
  }

  /** Binds now and keeps a bind up until `close`, so receipts and replies arrive while idle. */
  start(): void {
    this.#keepOpen = true;
    this.#ensureConnection();
  }

  get bound(): boolean {
    return this.#connection?.state === 'bound';
  }

  /** Successful binds so far. */
  get binds(): number {
    return this.#binds;
  }

  /**
   * Submits one PDU's fields as a submit_sm, through the window. `beforeWrite` is awaited once
   * the submission holds a window slot, right before it is written; when it throws, nothing is
   * written and the promise rejects with its error.
   */
  submitPdu(
    params: Record<string, unknown>,
    beforeWrite?: BeforeWrite,
    afterAccepted?: (messageId: string) => Promise<void>,
  ): Promise<PduResult> {
    if (this.#closed)
      return Promise.resolve({ kind: 'not-sent', reason: 'the SMPP client is closed' });
    if (this.#refusal && !this.#connection) {
      this.#ensureConnection();
      return Promise.resolve({ kind: 'not-sent', reason: this.#refusal });
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({
        params,
        beforeWrite,
        afterAccepted,
        enqueuedAt: Date.now(),
        throttles: 0,
        rebinds: 0,
        lastStatus: null,
        settle: resolve,
        withhold: reject,
      });
      this.#ensureConnection();
      this.#startSweep();
      this.#pump();
    });
  }

  /**
   * Submits a message, one part after another; the first part's id is the message's. A part
   * refused after earlier ones were accepted leaves the message partly sent: that outcome is
   * `unknown`, since sending it again would repeat the accepted parts. `beforeWrite` runs before
   * the first part only (submitPdu).
   */
  async submitMessage(
    message: SmppMessage,
    defaultSource: string | null,
    beforeWrite?: BeforeWrite,
    afterAccepted?: (providerMessageId: string) => Promise<void>,
  ): Promise<SmppSubmission> {
    const encoded = encodeSms(message.body, this.#nextReference());
    const source = smppAddress(message.from ?? defaultSource);
    const destination: SmppAddress = smppAddress(message.to);
    const partIds: string[] = [];
    for (const [index, shortMessage] of encoded.parts.entries()) {
      const result = await this.submitPdu(
        {
          source_addr_ton: source.ton,
          source_addr_npi: source.npi,
          source_addr: source.addr,
          dest_addr_ton: destination.ton,
          dest_addr_npi: destination.npi,
          destination_addr: destination.addr,
          esm_class: encoded.esmClass,
          // A final delivery receipt, whether delivered or not.
          registered_delivery: 0x01,
          ...(message.validUntil ? { validity_period: smppAbsoluteTime(message.validUntil) } : {}),
          data_coding: encoded.dataCoding,
          short_message: shortMessage,
        },
        index === 0 ? beforeWrite : undefined,
        afterAccepted && index === encoded.parts.length - 1
          ? (messageId) => afterAccepted(partIds[0] ?? messageId)
          : undefined,
      );
      if (result.kind === 'response' && result.status === ESME_ROK) {
        partIds.push(result.messageId);
        continue;
      }
      const outcome = outcomeOf(result, this.#options.throttleDelaysMs);
      if (partIds.length === 0 || outcome.kind === 'accepted') return { outcome, partIds };
      return {
        outcome: {
          kind: 'unknown',
          reason: `only ${partIds.length} of ${encoded.parts.length} parts were accepted; part ${index + 1}: ${outcome.reason}`,
        },
        partIds,
      };
    }
    return { outcome: { kind: 'accepted', providerMessageId: partIds[0] as string }, partIds };
  }

  /** Unbinds gracefully (collecting the responses still owed first) and stops reconnecting. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#pumpTimer);
    clearInterval(this.#sweepTimer);
    for (const job of this.#queue.splice(0))
      job.settle({ kind: 'not-sent', reason: 'the SMPP client closed' });
    const connection = this.#connection;
    if (!connection) return;
    const closed = new Promise<void>((resolve) => {
      if (connection.state === 'closed') resolve();
      else connection.session.once('close', () => resolve());
    });
    if (connection.state === 'bound') {
      this.#retire(connection, true);
      this.#maybeFinishUnbind(connection);
    } else if (connection.state === 'unbinding') {
      this.#maybeFinishUnbind(connection);
    } else {
      connection.session.destroy();
    }
    await closed;
  }

  #nextReference(): number {
    this.#reference = (this.#reference + 1) % 256;
    return this.#reference;
  }

  #log(level: 'info' | 'warn', message: string) {
    this.#options.log?.(level, `SMPP ${this.#options.label ?? this.#options.host}: ${message}`);
  }

  #ensureConnection() {
    if (this.#closed || this.#connection || this.#reconnectTimer) return;
    this.#connect();
  }

  #scheduleReconnect() {
    if (this.#closed || this.#reconnectTimer) return;
    if (!this.#keepOpen && this.#queue.length === 0) return;
    const delays = this.#options.reconnectDelaysMs;
    const delay = delays[Math.min(this.#reconnectAttempt, delays.length - 1)] ?? 1_000;
    this.#reconnectAttempt++;
    this.#reconnectTimer = timer(delay, () => {
      this.#reconnectTimer = undefined;
      this.#ensureConnection();
    });
  }

  #connect() {
    const session = new smpp.Session({ host: this.#options.host, port: this.#options.port });
    // Small PDUs must not wait for the previous one's ACK (Nagle), or the window never fills.
    session.socket.setNoDelay(true);
    const connection: Connection = {
      session,
      state: 'connecting',
      inFlight: new Map(),
      holding: 0,
      deliveries: 0,
      ownUnbind: false,
      finishing: false,
      timers: new Set(),
      enquirePending: false,
    };
    this.#connection = connection;
    this.#after(connection, this.#options.connectTimeoutMs, () => {
      if (connection.state !== 'connecting') return;
      this.#lastError = `no TCP connection within ${this.#options.connectTimeoutMs} ms`;
      session.destroy();
    });
    session.on('connect', () => this.#bind(connection));
    session.on('error', (error: Error) => {
      this.#lastError = error.message;
    });
    session.on('close', () => this.#onClose(connection));
    session.on('pdu', (pdu: smpp.PDU) => {
      if (!pdu.isResponse()) this.#onRequest(connection, pdu);
    });
  }

  #after(connection: Connection, ms: number, callback: () => void) {
    const handle = timer(ms, () => {
      connection.timers.delete(handle);
      callback();
    });
    connection.timers.add(handle);
    return handle;
  }

  #bind(connection: Connection) {
    if (connection.state !== 'connecting') return;
    connection.state = 'binding';
    const pdu = new smpp.PDU('bind_transceiver', {
      system_id: this.#options.systemId,
      password: this.#options.password,
      system_type: this.#options.systemType ?? '',
      interface_version: 0x34,
    });
    const timeout = this.#after(connection, this.#options.responseTimeoutMs, () => {
      this.#lastError = `no bind_transceiver_resp within ${this.#options.responseTimeoutMs} ms`;
      connection.session.destroy();
    });
    connection.session.send(pdu, (response) => {
      clearTimeout(timeout);
      if (connection.state !== 'binding') return;
      if (response.command_status !== ESME_ROK) {
        this.#refusal = `SMPP bind refused: ${describeStatus(response.command_status)}`;
        this.#lastError = this.#refusal;
        this.#log('warn', this.#refusal);
        for (const job of this.#queue.splice(0))
          job.settle({ kind: 'not-sent', reason: this.#refusal });
        // Gone at once, so submissions until the next attempt fail without waiting for it.
        this.#connection = null;
        connection.session.destroy();
        this.#scheduleReconnect();
        return;
      }
      connection.state = 'bound';
      this.#refusal = null;
      this.#lastError = null;
      this.#reconnectAttempt = 0;
      this.#binds++;
      this.#log('info', `bound as ${this.#options.systemId}`);
      const keepAlive = setInterval(() => this.#enquire(connection), this.#options.enquireLinkMs);
      keepAlive.unref();
      connection.enquireTimer = keepAlive;
      this.#pump();
    });
  }

  #enquire(connection: Connection) {
    if (connection.state !== 'bound' || connection.enquirePending) return;
    connection.enquirePending = true;
    const timeout = this.#after(connection, this.#options.responseTimeoutMs, () => {
      this.#lastError = `no enquire_link_resp within ${this.#options.responseTimeoutMs} ms`;
      this.#log('warn', `${this.#lastError}: the bind is dead`);
      connection.session.destroy();
    });
    connection.session.send(new smpp.PDU('enquire_link'), () => {
      clearTimeout(timeout);
      connection.timers.delete(timeout);
      connection.enquirePending = false;
    });
  }

  #onRequest(connection: Connection, pdu: smpp.PDU) {
    const session = connection.session;
    switch (pdu.command) {
      case 'enquire_link':
        session.send(pdu.response());
        return;
      case 'unbind':
        // Answered once the deliver_sm being stored are answered: the SMSC closes on unbind_resp.
        connection.unbindResponse = pdu.response();
        if (connection.state === 'bound' || connection.state === 'binding') {
          this.#log('warn', 'the SMSC unbound; rebinding once the responses owed have arrived');
          this.#retire(connection, false);
        }
        this.#maybeFinishUnbind(connection);
        return;
      case 'deliver_sm':
        this.#onDeliver(connection, pdu);
        return;
      case 'alert_notification':
        return;
      default:
        // generic_nack for an unknown command id, ESME_RINVCMDID for one Herald does not take.
        session.send(
          pdu.command === 'unknown'
            ? pdu.response()
            : pdu.response({ command_status: ESME_RINVCMDID }),
        );
    }
  }

  #onDeliver(connection: Connection, pdu: smpp.PDU) {
    connection.deliveries++;
    const handle = this.#options.onDeliver ?? (async () => ESME_ROK);
    handle(pdu)
      .catch((error: Error) => {
        this.#log('warn', `deliver_sm not stored, the SMSC will redeliver it: ${error.message}`);
        return ESME_RX_T_APPN;
      })
      .then((status) => {
        connection.session.send(pdu.response({ command_status: status }));
        connection.deliveries--;
        this.#maybeFinishUnbind(connection);
      });
  }

  #pump() {
    const connection = this.#connection;
    // The state is checked on every turn: a write that fails retires the connection.
    while (
      connection?.state === 'bound' &&
      this.#queue.length > 0 &&
      connection.inFlight.size + connection.holding < this.#options.window
    ) {
      const wait = this.#pausedUntil - Date.now();
      if (wait > 0) {
        clearTimeout(this.#pumpTimer);
        this.#pumpTimer = timer(wait, () => this.#pump());
        return;
      }
      const job = this.#queue.shift() as Job;
      if (job.beforeWrite) void this.#prepare(connection, job, job.beforeWrite);
      else this.#write(connection, job);
    }
  }

  /**
   * Runs a submission's `beforeWrite` in the slot it holds, then writes it; a throw frees the slot
   * with nothing written. `beforeWrite` may write it sooner, synchronously, by calling the write it
   * is given. A bind lost meanwhile sends it back to the front of the queue.
   */
  async #prepare(connection: Connection, job: Job, beforeWrite: BeforeWrite) {
    job.beforeWrite = undefined;
    connection.holding++;
    let leftSlot = false;
    // Never throws: beforeWrite may call it inside a write mark's COMMIT (OutboundSms).
    const write: WriteNow = Object.assign(
      () => {
        if (leftSlot) return;
        leftSlot = true;
        connection.holding--;
        this.#writeOrRequeue(connection, job);
      },
      { together: (writes: WriteNow[]) => writeTogether(connection, writes) },
    );
    try {
      // Encoded first: a PDU that cannot be encoded is refused before anything is marked.
      submitSm(job);
      await beforeWrite(write);
    } catch (error) {
      if (!leftSlot) {
        leftSlot = true;
        connection.holding--;
        job.withhold(error);
      }
    }
    write();
    this.#maybeFinishUnbind(connection);
    this.#pump();
  }

  /** Writes a job that held a slot, or queues it again when the bind is gone or paused. */
  #writeOrRequeue(connection: Connection, job: Job) {
    if (this.#closed) job.settle({ kind: 'not-sent', reason: 'the SMPP client closed' });
    else if (connection.state === 'bound' && this.#pausedUntil <= Date.now()) {
      try {
        this.#write(connection, job);
      } catch (error) {
        // Nothing was written (the PDU is encoded before, so this is not expected).
        job.withhold(error);
      }
    } else {
      this.#queue.unshift(job);
      this.#ensureConnection();
      this.#startSweep();
    }
  }

  #write(connection: Connection, job: Job) {
    const pdu = submitSm(job);
    const written = connection.session.send(pdu, (response) =>
      this.#onResponse(connection, job, response),
    );
    if (!written) {
      // The socket is going away: nothing was written, the job waits for the next bind. The
      // connection takes nothing more (or #pump would try it again and again).
      this.#queue.unshift(job);
      connection.state = 'unbinding';
      connection.ownUnbind = false;
      connection.session.destroy();
      return;
    }
    const sequence = pdu.sequence_number;
    connection.inFlight.set(sequence, job);
    job.timer = this.#after(connection, this.#options.submitTimeoutMs, () => {
      if (!connection.inFlight.delete(sequence)) return;
      job.settle({
        kind: 'unknown',
        reason: `no submit_sm_resp within ${this.#options.submitTimeoutMs / 1000} s`,
      });
      this.#maybeFinishUnbind(connection);
      this.#pump();
    });
  }

  #onResponse(connection: Connection, job: Job, response: smpp.PDU) {
    if (!connection.inFlight.delete(response.sequence_number)) return;
    if (job.timer) {
      clearTimeout(job.timer);
      connection.timers.delete(job.timer);
    }
    const status = response.command_status;
    const kind = status === ESME_ROK ? 'ok' : statusClass(status);
    if (kind === 'throttled' && job.throttles < this.#options.throttleDelaysMs.length) {
      const delay = this.#options.throttleDelaysMs[job.throttles] as number;
      job.throttles++;
      job.lastStatus = status;
      this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + delay);
      this.#queue.unshift(job);
    } else if (kind === 'rebind' && job.rebinds < this.#options.maxRebinds) {
      job.rebinds++;
      job.lastStatus = status;
      this.#queue.unshift(job);
      if (connection.state === 'bound') {
        // The SMSC no longer takes submissions on this bind: make a new one.
        this.#log('warn', 'the SMSC answered ESME_RINVBNDSTS; rebinding');
        this.#retire(connection, true);
      }
    } else {
      const messageId = typeof response.message_id === 'string' ? response.message_id : '';
      if (status === ESME_ROK && job.afterAccepted) {
        void this.#recordAccepted(connection, job, job.afterAccepted, messageId);
        return;
      }
      job.settle({ kind: 'response', status, messageId });
    }
    this.#maybeFinishUnbind(connection);
    this.#pump();
  }

  /**
   * Runs an accepted submission's `afterAccepted` in the slot it still holds, then frees the slot:
   * what its caller records there never lags the window. A failure there is the caller's.
   */
  async #recordAccepted(
    connection: Connection,
    job: Job,
    afterAccepted: (messageId: string) => Promise<void>,
    messageId: string,
  ) {
    connection.holding++;
    await afterAccepted(messageId).catch(() => {});
    connection.holding--;
    job.settle({ kind: 'response', status: ESME_ROK, messageId });
    this.#maybeFinishUnbind(connection);
    this.#pump();
  }

  /**
   * Stops writing to a connection; once the responses owed have arrived (or after the response
   * timeout) it is closed, with an unbind first when Herald is the one leaving.
   */
  #retire(connection: Connection, ownUnbind: boolean) {
    connection.state = 'unbinding';
    connection.ownUnbind = ownUnbind;
    this.#after(connection, this.#options.responseTimeoutMs, () => connection.session.destroy());
  }

  #maybeFinishUnbind(connection: Connection) {
    if (connection.state !== 'unbinding' && !connection.unbindResponse) return;
    if (connection.deliveries > 0) return;
    if (connection.unbindResponse) {
      connection.session.send(connection.unbindResponse);
      connection.unbindResponse = undefined;
    }
    if (connection.state !== 'unbinding' || connection.inFlight.size + connection.holding > 0)
      return;
    this.#finishUnbind(connection);
  }

  /** Every response owed has arrived: unbind (when Herald is the one leaving) and close. */
  #finishUnbind(connection: Connection) {
    if (connection.finishing) return;
    connection.finishing = true;
    if (!connection.ownUnbind) {
      connection.session.close();
      return;
    }
    this.#after(connection, this.#options.responseTimeoutMs, () => connection.session.destroy());
    const sent = connection.session.send(new smpp.PDU('unbind'), () => connection.session.close());
    if (!sent) connection.session.destroy();
  }

  #onClose(connection: Connection) {
    const wasBound = connection.state === 'bound' || connection.state === 'unbinding';
    connection.state = 'closed';
    for (const handle of connection.timers) clearTimeout(handle);
    connection.timers.clear();
    clearInterval(connection.enquireTimer);
    for (const job of connection.inFlight.values())
      job.settle({ kind: 'unknown', reason: DROPPED });
    connection.inFlight.clear();
    if (this.#connection === connection) this.#connection = null;
    if (this.#closed) return;
    if (wasBound)
      this.#log('warn', `connection closed${this.#lastError ? `: ${this.#lastError}` : ''}`);
    this.#scheduleReconnect();
  }

  /** Once a second while submissions queue: fail those that waited too long for a bind or a slot. */
  #startSweep() {
    if (this.#sweepTimer) return;
    this.#sweepTimer = setInterval(() => {
      const now = Date.now();
      const bound = this.bound;
      for (const job of [...this.#queue]) {
        const waited = now - job.enqueuedAt;
        const tooLong = waited >= this.#options.maxQueueWaitMs;
        if (!tooLong && (bound || waited < this.#options.bindWaitMs)) continue;
        this.#queue.splice(this.#queue.indexOf(job), 1);
        const cause =
          job.lastStatus !== null
            ? describeStatus(job.lastStatus)
            : (this.#lastError ?? 'still connecting');
        const reason = tooLong
          ? `waited ${Math.round(waited / 1000)} s for the SMSC to take it (${cause})`
          : `no SMPP bind for ${Math.round(waited / 1000)} s (${cause})`;
        job.settle(
          job.lastStatus !== null && statusClass(job.lastStatus) === 'throttled'
            ? {
                kind: 'not-sent',
                reason,
                retryAfterMs: longestBackOff(this.#options.throttleDelaysMs),
              }
            : { kind: 'not-sent', reason },
        );
      }
      if (this.#queue.length === 0) {
        clearInterval(this.#sweepTimer);
        this.#sweepTimer = undefined;
      }
    }, 1_000);
    this.#sweepTimer.unref();
  }
}

/** The last (longest) throttling back-off: how long the SMSC is given before a resubmission. */
function longestBackOff(throttleDelaysMs: number[]): number {
  return throttleDelaysMs.at(-1) ?? 1_000;
}

/**
 * A part's result as the submission's outcome (for the first part, or one alone): no answer is
 * `unknown`; an SMSC still throttling after every back-off is `failed` with the longest back-off
 * as `retryAfterMs`.
 */
function outcomeOf(result: PduResult, throttleDelaysMs: number[]): SubmitOutcome {
  if (result.kind === 'unknown') return { kind: 'unknown', reason: result.reason };
  if (result.kind === 'not-sent')
    return result.retryAfterMs === undefined
      ? { kind: 'failed', reason: result.reason }
      : { kind: 'failed', reason: result.reason, retryAfterMs: result.retryAfterMs };
  if (result.status === ESME_ROK) return { kind: 'accepted', providerMessageId: result.messageId };
  const described = describeStatus(result.status);
  switch (statusClass(result.status)) {
    case 'throttled':
      return {
        kind: 'failed',
        reason: `${described}, still after ${throttleDelaysMs.length} back-offs`,
        retryAfterMs: longestBackOff(throttleDelaysMs),
      };
    case 'rebind':
      return { kind: 'failed', reason: `${described}, on every bind tried` };
    case 'rejected':
      return { kind: 'rejected', reason: described };
    case 'failed':
      return { kind: 'failed', reason: described };
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined),
  ) as Partial<T>;
}
