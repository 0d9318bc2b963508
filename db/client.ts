import postgres from 'postgres';
import { createGuardedPool } from './guarded-pool.js';

export { isDroppedTypeQueryFailure, recoverFromClosedSocketWrite } from './guarded-pool.js';
export { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

/**
 * How a read inside a transaction holds its rows until the transaction ends: `update` against
 * every other writer or locker, `share` against writers only (several may share). None outside.
 */
export type RowLock = 'update' | 'share';

export const rowLock = (sql: Sql | TransactionSql, lock?: RowLock) =>
  lock === 'update' ? sql`for update` : lock === 'share' ? sql`for share` : sql``;

/**
 * A CTE for one statement, outside any transaction, whose write may be lost should Postgres
 * itself crash (a rate bucket, a send slot: at worst a little more is let through once, after the
 * crash): its commit does not wait for the WAL to reach the disk, one flush fewer on a message's
 * way. Inside a transaction it would relax the whole transaction's commit, hence `Sql` only. The
 * statement must read `relaxed`, or the CTE is not run.
 */
export const relaxedCommit = (sql: Sql) =>
  sql`relaxed as materialized (select set_config('synchronous_commit', 'off', true))`;

/** int8 ids fit in a JS number for any realistic table size; strings would leak into every API. */
const bigintAsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (value: string) => Number(value),
};

/*
 * Every database call is bounded, so that a Postgres outage is a prompt error (a 503 in the api,
 * a failed and retried activity in the worker) and never a hang: while Postgres is unreachable,
 * calls are refused at once (guarded-pool.ts); a call that meets the outage waits at most the
 * reconnect delay and CONNECT_TIMEOUT_S for its connection, then runs at most
 * STATEMENT_TIMEOUT_MS. That is well under an activity's 10 s heartbeat timeout.
 */

/** A connection attempt to a local or same-region Postgres takes milliseconds, TLS included. */
const CONNECT_TIMEOUT_S = 2;
/** How long a transaction may wait for its connection (pool busy, Postgres starting). */
const CONNECTION_WAIT_MS = 2_000;
/** Server-side bound of one statement, lock waits included. */
const STATEMENT_TIMEOUT_MS = 3_000;
/** A transaction left waiting on something else this long is ended by the server, releasing its locks. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 5_000;
/** Pooled connections unused this long are closed; the pool opens them again on demand. */
const IDLE_CONNECTION_S = 60;
/** Connections are replaced after this long, so a failover or a parameter change reaches them all. */
const CONNECTION_LIFETIME_S = 30 * 60;
/**
 * The delay before reconnecting after a failed attempt, by consecutive failures of the pool:
 * 10 ms doubling to at most 100 ms. Each connection takes one waiting query to each attempt, so
 * this paces how fast the queries already waiting when Postgres went away fail (postgres.js's
 * default grows to 20 s: that is what made requests hang through an outage). Nothing new waits
 * while Postgres is known to be away (guarded-pool.ts); only a LISTEN connection keeps retrying,
 * ten refused connects a second at most, each bounded by CONNECT_TIMEOUT_S.
 */
const reconnectDelayS = (failures: number) => Math.min(0.005 * 2 ** failures, 0.1);

export interface SqlOptions {
  max?: number;
  /** No statement timeout: for migrations, whose DDL may legitimately take longer. */
  unboundedStatements?: boolean;
  /** Told when Postgres becomes unreachable and reachable again. */
  log?: (line: string) => void;
}

/** Connections a service process's pool holds at most. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * The Postgres pool. Beyond postgres.js's own options it fails fast while Postgres is unreachable
 * and guards transactions whose connection dies (see guarded-pool.ts).
 */
export function createSql(url: string, options: SqlOptions = {}): Sql {
  const timeouts = options.unboundedStatements
    ? { idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS }
    : {
        statement_timeout: STATEMENT_TIMEOUT_MS,
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      };
  return createGuardedPool(
    () =>
      postgres(url, {
        max: options.max ?? DEFAULT_POOL_SIZE,
        onnotice: () => {},
        transform: { column: { from: postgres.toCamel } },
        types: { bigint: bigintAsNumber },
        connection: { application_name: 'herald', ...timeouts },
        connect_timeout: CONNECT_TIMEOUT_S,
        idle_timeout: IDLE_CONNECTION_S,
        max_lifetime: CONNECTION_LIFETIME_S,
        backoff: reconnectDelayS,
      }),
    { connectionWaitMs: CONNECTION_WAIT_MS, log: options.log },
  );
}

/** One round trip to Postgres, for health checks. */
export function ping(sql: Sql): Promise<unknown> {
  return sql`select 1`.execute();
}
