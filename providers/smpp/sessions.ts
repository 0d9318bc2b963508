/**
 * The SMPP binds of one worker process: one per SMPP provider (keyed by provider id and a hash of
 * its bind settings and credentials), opened by the first submission and also kept up for every
 * active SMPP provider (the list is asked of the sink every 30 s), so that receipts and replies
 * arrive while nothing is being sent. Each bind's `deliver_sm` go to the sink: receipts on their
 * message, replies (STOP/START, or stored for the workspace). `close` unbinds them all.
 *
 * Vendor I/O only: what is read and written goes through the sink the worker hands in
 * (activities/smpp-binds.ts writes it to Postgres). Only workers hold binds: the worker makes
 * them at start-up, hands them to its activities and closes them at shutdown; an SMPP adapter
 * without sessions (the api) fails its submissions instead of binding.
 */
import type { StoredProvider } from '../../domain/provider-definition.js';
import type { DeliveryStatus, OutboundSms, SubmitOutcome } from '../types.js';
import { SmppClient, type SmppClientOptions, type SmppLog } from './client.js';
import { type SmppProviderConfig, smppConfigOf } from './config.js';
import { type DeliverSmFields, ESME_ROK, parseDeliverSm, receiptErrorCode } from './protocol.js';

/** A receipt that came over a bind, for the provider it was bound for. */
export interface SmppReceipt {
  workspaceId: number;
  providerSlug: string;
  /** The id the receipt names: the message's, or one of its later parts'. */
  providerMessageId: string;
  status: DeliveryStatus;
  errorCode: string | null;
  at: Date;
}

/** Where the binds read their providers from and deliver what arrives; a failure makes the SMSC deliver it again. */
export interface SmppSink {
  /** The providers to keep a bind for: every active SMPP provider. */
  activeProviders(): Promise<StoredProvider[]>;
  receipt(receipt: SmppReceipt): Promise<void>;
  /** A recipient's reply (STOP, START, HELP, any text) to `to`, a sender of the provider's. */
  reply(reply: {
    workspaceId: number;
    providerSlug: string;
    from: string;
    to: string;
    body: string;
  }): Promise<void>;
  /** The ids of a long message's parts, first part first: receipts for any part reach the message. */
  messageParts(parts: {
    workspaceId: number;
    providerSlug: string;
    partIds: string[];
  }): Promise<void>;
  /** Forgets what is stale (receipts no message claimed, old part maps); run hourly. */
  cleanUp(): Promise<void>;
}

export interface SmppSessionsOptions {
  sink: SmppSink;
  /** HERALD_SECRET: decrypts the providers' credentials. */
  secret: string;
  refreshIntervalMs?: number;
  log?: SmppLog;
  /** Overrides of the binds' timers and limits. */
  client?: Partial<SmppClientOptions>;
}

interface Entry {
  config: SmppProviderConfig;
  client: SmppClient;
  createdAt: number;
}

const REFRESH_INTERVAL_MS = 30_000;
const CLEANUP_INTERVAL_MS = 60 * 60_000;

export class SmppSessions {
  readonly #options: SmppSessionsOptions;
  readonly #entries = new Map<string, Entry>();
  #refreshTimer: NodeJS.Timeout | undefined;
  #nextCleanup = 0;
  #closed = false;

  constructor(options: SmppSessionsOptions) {
    this.#options = options;
  }

  /** Providers this process holds a bind (or is binding) for. */
  get size(): number {
    return this.#entries.size;
  }

  /** Binds every active SMPP provider, and keeps doing so every refresh interval. */
  async start(): Promise<void> {
    await this.#refreshSafely();
    this.#refreshTimer = setInterval(
      () => void this.#refreshSafely(),
      this.#options.refreshIntervalMs ?? REFRESH_INTERVAL_MS,
    );
    this.#refreshTimer.unref();
  }

  /** Binds for the active SMPP providers, and no others; an hourly clean-up of stale records. */
  async refresh(): Promise<void> {
    const startedAt = Date.now();
    const records = await this.#options.sink.activeProviders();
    if (this.#closed) return;
    const wanted = new Set<string>();
    for (const record of records) {
      try {
        const config = smppConfigOf(record, this.#options.secret);
        wanted.add(config.bindKey);
        this.#entryFor(config).client.start();
      } catch (error) {
        this.#log(
          'warn',
          `SMPP provider ${record.slug} (workspace ${record.workspaceId}) is not usable: ${(error as Error).message}`,
        );
      }
    }
    for (const [key, entry] of this.#entries) {
      // An entry made by a submission since the list was read stays.
      if (wanted.has(key) || entry.createdAt >= startedAt) continue;
      this.#entries.delete(key);
      void entry.client.close();
    }
    if (Date.now() >= this.#nextCleanup) {
      this.#nextCleanup = Date.now() + CLEANUP_INTERVAL_MS;
      await this.#options.sink.cleanUp();
    }
  }

  /**
   * Submits through the provider's bind, making it if there is none yet; `message.beforeWrite`
   * runs once the message holds a slot of the bind's window (SmppClient.submitPdu).
   */
  async submit(config: SmppProviderConfig, message: OutboundSms): Promise<SubmitOutcome> {
    if (this.#closed) return { kind: 'failed', reason: 'the worker is shutting down' };
    const entry = this.#entryFor(config);
    entry.client.start();
    const { outcome, partIds } = await entry.client.submitMessage(
      { to: message.to, from: message.from, body: message.body, validUntil: message.validUntil },
      config.sourceAddr,
      message.beforeWrite,
      message.afterAccepted,
    );
    if (outcome.kind === 'accepted' && partIds.length > 1) {
      // Accepted whatever happens here; without the map, receipts for later parts go unmatched.
      await this.#options.sink
        .messageParts({
          workspaceId: config.workspaceId,
          providerSlug: config.slug,
          partIds,
        })
        .catch((error: Error) =>
          this.#log(
            'warn',
            `part ids of ${config.slug} message ${partIds[0]} not kept: ${error.message}`,
          ),
        );
    }
    return outcome;
  }

  /** Unbinds everything; submissions after this fail. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#refreshTimer);
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((entry) => entry.client.close()));
  }

  #log(level: 'info' | 'warn', message: string) {
    this.#options.log?.(level, message);
  }

  async #refreshSafely() {
    try {
      await this.refresh();
    } catch (error) {
      this.#log('warn', `SMPP providers not refreshed: ${(error as Error).message}`);
    }
  }

  #entryFor(config: SmppProviderConfig): Entry {
    const existing = this.#entries.get(config.bindKey);
    if (existing) return existing;
    // The provider's settings changed: its old bind goes.
    for (const [key, entry] of this.#entries) {
      if (entry.config.providerId !== config.providerId) continue;
      this.#entries.delete(key);
      void entry.client.close();
    }
    const client = new SmppClient({
      host: config.host,
      port: config.port,
      systemId: config.systemId,
      password: config.password,
      systemType: config.systemType,
      window: config.window,
      label: `${config.slug} (workspace ${config.workspaceId})`,
      log: this.#options.log,
      onDeliver: (pdu) => this.#onDeliver(config, pdu as unknown as DeliverSmFields),
      ...this.#options.client,
    });
    const entry = { config, client, createdAt: Date.now() };
    this.#entries.set(config.bindKey, entry);
    return entry;
  }

  /** Records a receipt or a reply; a failure to store it makes the SMSC deliver it again. */
  async #onDeliver(config: SmppProviderConfig, pdu: DeliverSmFields): Promise<number> {
    const parsed = parseDeliverSm(pdu);
    if (parsed.kind === 'receipt') {
      if (parsed.outcome === 'ignored') return ESME_ROK;
      await this.#options.sink.receipt({
        workspaceId: config.workspaceId,
        providerSlug: config.slug,
        providerMessageId: parsed.providerMessageId,
        status: parsed.outcome,
        errorCode:
          parsed.outcome === 'delivered' ? null : receiptErrorCode(parsed.stat, parsed.err),
        // Receipts without a readable done date are dated when they arrive.
        at: parsed.doneAt ?? new Date(),
      });
    } else if (parsed.kind === 'reply') {
      await this.#options.sink.reply({
        workspaceId: config.workspaceId,
        providerSlug: config.slug,
        from: parsed.from,
        to: parsed.to,
        body: parsed.body,
      });
    } else {
      this.#log('info', `SMPP ${config.slug}: deliver_sm not recorded: ${parsed.reason}`);
    }
    return ESME_ROK;
  }
}
