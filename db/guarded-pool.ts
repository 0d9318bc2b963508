import type postgres from 'postgres';
import { DatabaseUnavailableError, isConnectionFailure } from './unavailable.js';

/**
 * Guards around a postgres.js 3.4.9 pool for when Postgres goes away. The newest release has no
 * fix for these (porsager/postgres#1066, #1154, #1208 and #1216 track them).
 *
 * 1. Fail fast while Postgres is unreachable. postgres.js queues a query until a connection
 *    attempt fails, and a queued query cannot safely be withdrawn: cancelling one that a
 *    connection has taken as its first query leaves that connection idle and lost to the pool
 *    once it connects. So once a call fails because no connection can be made, later calls are
 *    refused at once with DatabaseUnavailableError, without queueing, while a `select 1` probes
 *    every PROBE_INTERVAL_MS; the first success lets calls through again.
 * 2. When a transaction's connection closes, postgres.js still sends that transaction's ROLLBACK
 *    (or COMMIT), and any later statement of its callback, to the connection: while it has no
 *    socket that write throws from a setImmediate callback (an uncaught `TypeError: Cannot read
 *    properties of null (reading 'write')` that ends the process), and once the pool reconnected
 *    it the statements run on the new session, outside the transaction or inside another
 *    caller's. Here a transaction whose connection is gone takes no more statements, and its
 *    callback's outcome is not handed back to postgres.js, so it sends neither COMMIT nor
 *    ROLLBACK (the server rolled the transaction back when the session ended).
 * 3. The same write can still race a connection closing under it elsewhere (a server going away
 *    during authentication, or while a query is being sent). The process's uncaughtException
 *    handler recognises that one error (`recoverFromClosedSocketWrite`): postgres.js leaves that
 *    connection's write buffer stale, so every pool is replaced by a fresh one and the old one is
 *    ended.
 * 4. A new connection's first statement is postgres.js's own query of the array types
 *    (`fetch_types`), whose promise it drops (porsager/postgres#1192, #1223): when the connection
 *    fails under that query (Postgres stopping, a reset), the rejection reaches nobody and is
 *    unhandled, which ends a process that has no handler. The call waiting for that connection
 *    fails or succeeds on its own; `isDroppedTypeQueryFailure` recognises the dropped one. That
 *    connection also keeps the failed query as its current one, so it never ends by itself:
 *    `end()` without a timeout would wait for it forever, so the pool's `end` has a default one.
 */

type Sql = postgres.Sql;
type TransactionSql = postgres.TransactionSql;

export interface GuardOptions {
  /** How long `begin` waits for a connection before it gives up. */
  connectionWaitMs: number;
  /** Told when Postgres becomes unreachable and reachable again. */
  log?: (line: string) => void;
}

/** How often an unreachable Postgres is probed: the delay before calls go through again. */
const PROBE_INTERVAL_MS = 250;
/** How long a replaced pool's queries in flight may still finish. */
const REPLACED_POOL_GRACE_S = 5;
/** How long `end()` lets queries in flight finish when its caller gives no timeout (4. above). */
const END_GRACE_S = 10;

const livePools = new Set<{ replace(): void }>();
let replacementScheduled = false;

/**
 * For the process's uncaughtException handler: true when `error` is postgres.js's write to a
 * connection that already lost its socket (3. above), after scheduling the replacement of every
 * pool. Several such errors in one turn of the event loop replace the pools once.
 */
export function recoverFromClosedSocketWrite(error: unknown): boolean {
  if (!isClosedSocketWrite(error)) return false;
  if (!replacementScheduled) {
    replacementScheduled = true;
    setImmediate(() => {
      replacementScheduled = false;
      for (const pool of livePools) pool.replace();
    });
  }
  return true;
}

function isClosedSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const stack = error.stack ?? '';
  return (
    error.message === "Cannot read properties of null (reading 'write')" &&
    /\bnextWrite\b/.test(stack) &&
    /[\\/]postgres[\\/]src[\\/]connection\.js/.test(stack)
  );
}

/** 4. above: the rejection of postgres.js's array type query, which no caller awaits. */
export function isDroppedTypeQueryFailure(reason: unknown): boolean {
  const query = (reason as { query?: unknown } | null)?.query;
  return (
    typeof query === 'string' &&
    /\bfrom pg_catalog\.pg_type a\b/.test(query) &&
    /\btypcategory = 'A'/.test(query)
  );
}

/** 1. above: whether calls go to Postgres, and the probe that finds it back. */
class Reachability {
  #unreachable = false;
  #probe: NodeJS.Timeout | undefined;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly log: ((line: string) => void) | undefined,
  ) {}

  /** Throws while Postgres is known to be unreachable. */
  check(): void {
    if (this.#unreachable) throw new DatabaseUnavailableError();
  }

  /** Watches a call's outcome (never its own rejection: the caller handles that). */
  observe(call: PromiseLike<unknown>): void {
    Promise.prototype.then.call(
      call,
      () => this.#reachable(),
      (error: unknown) => {
        if (isConnectionFailure(error)) this.#unreach(error);
      },
    );
  }

  stop(): void {
    clearTimeout(this.#probe);
    this.#probe = undefined;
  }

  #reachable() {
    if (!this.#unreachable) return;
    this.#unreachable = false;
    this.stop();
    this.log?.('Postgres is reachable again.');
  }

  #unreach(error: unknown) {
    if (this.#unreachable) return;
    this.#unreachable = true;
    this.log?.(
      `Postgres is unreachable (${(error as Error).message}); database calls fail at once until it answers again.`,
    );
    this.#scheduleProbe();
  }

  #scheduleProbe() {
    this.#probe = setTimeout(() => {
      this.probe().then(
        () => this.#reachable(),
        () => {
          if (this.#unreachable && this.#probe) this.#scheduleProbe();
        },
      );
    }, PROBE_INTERVAL_MS);
    this.#probe.unref();
  }
}

interface Listener {
  channel: string;
  onNotify: (value: string) => void;
  onListen: (() => void) | undefined;
}

/** A `Sql` that runs on the pool `open()` makes, with the guards above. */
export function createGuardedPool(open: () => Sql, options: GuardOptions): Sql {
  let pool = open();
  let ended = false;
  const listeners = new Set<Listener>();
  const reachability = new Reachability(() => pool`select 1`.execute(), options.log);

  const entry = {
    replace() {
      if (ended) return;
      const replaced = pool;
      pool = open();
      // The listener is called again once the new pool's LISTEN is in place.
      for (const listener of listeners) listenOn(pool, listener).catch(() => {});
      replaced.end({ timeout: REPLACED_POOL_GRACE_S }).catch(() => {});
      options.log?.('Replaced the Postgres pool after a write on a closed connection.');
    },
  };
  livePools.add(entry);

  function listenOn(target: Sql, listener: Listener) {
    // postgres.js itself listens again after each reconnect.
    return target.listen(listener.channel, listener.onNotify, listener.onListen);
  }

  /** A call made through the pool: refused while Postgres is unreachable, watched otherwise. */
  function call<T>(make: () => T): T {
    reachability.check();
    const made = make();
    // Fragments and helpers (sql`…` inside a query, sql(rows)) settle only inside their query.
    if (made instanceof Promise) reachability.observe(made);
    return made;
  }

  const overrides: Partial<Record<keyof Sql, unknown>> = {
    // A promise, so refused as a rejection rather than a throw.
    begin: async (...args: unknown[]) => call(() => guardedBegin(pool, args, options)),
    unsafe: (...args: Parameters<Sql['unsafe']>) => call(() => pool.unsafe(...args)),
    listen: async (channel: string, onNotify: (value: string) => void, onListen?: () => void) => {
      const listener: Listener = { channel, onNotify, onListen };
      listeners.add(listener);
      try {
        const meta = await listenOn(pool, listener);
        return {
          ...meta,
          unlisten: async () => {
            listeners.delete(listener);
            await meta.unlisten();
          },
        };
      } catch (error) {
        listeners.delete(listener);
        throw error;
      }
    },
    end: (endOptions?: { timeout?: number }) => {
      ended = true;
      livePools.delete(entry);
      reachability.stop();
      return pool.end({ timeout: END_GRACE_S, ...endOptions });
    },
  };

  return new Proxy((() => {}) as unknown as Sql, {
    apply: (_target, _this, args: unknown[]) =>
      call(() => Reflect.apply(pool, undefined, args) as unknown),
    get: (_target, property) =>
      property in overrides
        ? overrides[property as keyof Sql]
        : Reflect.get(pool, property as keyof Sql),
  });
}

type TransactionState = 'waiting' | 'running' | 'over' | 'lost';

/** How a transaction ends when its session does (postgres.js's own code for it, and the server's). */
const SESSION_LOST = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'ECONNRESET',
  '57P01',
  '57P02',
  '25P03',
]);

class TransactionEndedError extends Error {
  constructor(readonly code: 'CONNECTION_CLOSED' | 'TRANSACTION_ENDED') {
    super(
      code === 'CONNECTION_CLOSED'
        ? 'The transaction lost its connection to Postgres; the server rolled it back.'
        : 'The transaction is over; it takes no more statements.',
    );
    this.name = 'TransactionEndedError';
  }
}

/** sql.begin([mode,] callback) with a bounded wait for its connection, and guard 2. */
function guardedBegin(pool: Sql, args: unknown[], options: GuardOptions): Promise<unknown> {
  const [mode, callback] = (args.length === 1 ? ['', args[0]] : args) as [
    string,
    (tx: TransactionSql) => unknown,
  ];
  let state: TransactionState = 'waiting';
  const isOver = () => state === 'over' || state === 'lost';
  let waitTimer: NodeJS.Timeout | undefined;

  const transaction = pool.begin(mode, (tx) => {
    clearTimeout(waitTimer);
    // The caller stopped waiting for a connection: roll back at once.
    if (state !== 'waiting') throw new TransactionEndedError('TRANSACTION_ENDED');
    state = 'running';
    let outcome: unknown;
    try {
      outcome = callback(guardTransaction(tx, () => state));
    } catch (error) {
      outcome = Promise.reject(error);
    }
    return handBackWhileConnected(Array.isArray(outcome) ? Promise.all(outcome) : outcome, isOver);
  });
  // Settles when the transaction committed, rolled back or lost its connection.
  transaction.then(
    () => {
      state = 'over';
    },
    (error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      state = typeof code === 'string' && SESSION_LOST.has(code) ? 'lost' : 'over';
    },
  );

  // A connection that does not come is given up on; postgres.js's queued BEGIN cannot be taken
  // back, so if it runs later the callback above rolls it back.
  const waitExpired = new Promise<never>((_, reject) => {
    waitTimer = setTimeout(() => {
      if (state !== 'waiting') return;
      state = 'over';
      reject(
        new DatabaseUnavailableError(
          'No connection to Postgres became free in time.',
          'POOL_TIMEOUT',
        ),
      );
    }, options.connectionWaitMs);
  });
  return Promise.race([transaction, waitExpired]).finally(() => clearTimeout(waitTimer));
}

/**
 * The callback's outcome, handed to postgres.js (which then sends COMMIT or ROLLBACK) only if the
 * transaction's connection is still there. A failure is handed back a timer turn later: when the
 * failure was the connection's, a socket error arrives before the socket's close, and the close
 * is what ends the transaction in postgres.js. A success goes back at once (its statements all
 * answered, so the connection was there a moment ago), keeping commits free of any delay.
 */
function handBackWhileConnected(outcome: unknown, isOver: () => boolean): Promise<unknown> {
  return new Promise((resolve, reject) => {
    Promise.resolve(outcome).then(
      (value) => {
        if (!isOver()) resolve(value);
      },
      (error) =>
        setTimeout(() => {
          if (!isOver()) reject(error);
        }, 0),
    );
  });
}

/** The transaction's `sql`, refusing statements once the transaction is over or lost. */
function guardTransaction(tx: TransactionSql, state: () => TransactionState): TransactionSql {
  const refuseIfEnded = () => {
    const now = state();
    if (now === 'lost') throw new TransactionEndedError('CONNECTION_CLOSED');
    if (now === 'over') throw new TransactionEndedError('TRANSACTION_ENDED');
  };
  return new Proxy(tx, {
    apply: (target, thisArg, args: unknown[]) => {
      refuseIfEnded();
      return Reflect.apply(target, thisArg, args);
    },
    get: (target, property) => {
      const value = Reflect.get(target, property);
      if (property !== 'unsafe' && property !== 'savepoint') return value;
      return (...args: unknown[]) => {
        refuseIfEnded();
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}
