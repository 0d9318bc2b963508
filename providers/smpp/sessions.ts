/**
 * The SMPP binds of one worker process: one per SMPP provider (keyed by provider id and a hash of
 * its bind settings and credentials), opened by the first submission and also kept up for every
 * active SMPP provider (the list is read from Postgres every 30 s), so that receipts and replies
 * arrive while nothing is being sent. Each bind's `deliver_sm` are recorded here: receipts on
 * their message (db/smpp.ts), replies as STOP/START (db/opt-outs.ts). `close` unbinds them all.
 *
 * Only workers hold binds (temporal/worker.ts acquires this at start-up and releases it at
 * shutdown); the api never does, and an SMPP adapter in a process without sessions fails its
 * submissions instead of binding.
 */
import type { Sql } from '../../db/client.js';
import { applyInboundReply } from '../../db/opt-outs.js';
import type { ProviderRecord } from '../../db/providers.js';
import {
  deleteStaleSmppRecords,
  findActiveSmppProviders,
  recordMessageParts,
  recordSmppReceipt,
} from '../../db/smpp.js';
import type { OutboundSms, SubmitOutcome } from '../types.js';
import { SmppClient, type SmppClientOptions, type SmppLog } from './client.js';
import { type SmppProviderConfig, smppConfigOf } from './config.js';
import { type DeliverSmFields, ESME_ROK, parseDeliverSm, receiptErrorCode } from './protocol.js';

export interface SmppSessionsOptions {
  sql: Sql;
  /** HERALD_SECRET: decrypts the providers' credentials. */
  secret: string;
  refreshIntervalMs?: number;
  /** The providers to keep a bind for; by default every active SMPP provider. */
  providers?: () => Promise<ProviderRecord[]>;
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
    const records = await (this.#options.providers?.() ??
      findActiveSmppProviders(this.#options.sql));
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
      await deleteStaleSmppRecords(this.#options.sql, { pendingDays: 7, partDays: 30 });
    }
  }

  /** Submits through the provider's bind, making it if there is none yet. */
  async submit(config: SmppProviderConfig, message: OutboundSms): Promise<SubmitOutcome> {
    if (this.#closed) return { kind: 'failed', reason: 'the worker is shutting down' };
    const entry = this.#entryFor(config);
    entry.client.start();
    const { outcome, partIds } = await entry.client.submitMessage(
      { to: message.to, from: message.from, body: message.body, validUntil: message.validUntil },
      config.sourceAddr,
    );
    if (outcome.kind === 'accepted' && partIds.length > 1) {
      // Accepted whatever happens here; without the map, receipts for later parts go unmatched.
      await recordMessageParts(this.#options.sql, {
        workspaceId: config.workspaceId,
        providerSlug: config.slug,
        partIds,
      }).catch((error: Error) =>
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
      await recordSmppReceipt(this.#options.sql, {
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
      await applyInboundReply(this.#options.sql, {
        workspaceId: config.workspaceId,
        from: parsed.from,
        body: parsed.body,
      });
    } else {
      this.#log('info', `SMPP ${config.slug}: deliver_sm not recorded: ${parsed.reason}`);
    }
    return ESME_ROK;
  }
}

let shared: { sessions: SmppSessions; users: number } | undefined;

/**
 * The process's SMPP sessions, started by the first worker of the process and shared with any
 * later one; each `acquire` is matched by a `release`, and the last release unbinds.
 */
export async function acquireSmppSessions(options: SmppSessionsOptions): Promise<SmppSessions> {
  if (shared) {
    shared.users++;
    return shared.sessions;
  }
  const sessions = new SmppSessions(options);
  shared = { sessions, users: 1 };
  await sessions.start();
  return sessions;
}

export async function releaseSmppSessions(): Promise<void> {
  if (!shared) return;
  shared.users--;
  if (shared.users > 0) return;
  const { sessions } = shared;
  shared = undefined;
  await sessions.close();
}

/** The process's SMPP sessions, if a worker runs in it. */
export function currentSmppSessions(): SmppSessions | undefined {
  return shared?.sessions;
}
