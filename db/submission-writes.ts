import type postgres from 'postgres';
import { DatabaseUnavailableError, type Sql } from './client.js';

/**
 * Write marks (0043): what tells a successor whether a claimed batch of submissions to a provider
 * that cannot look messages up (SMPP) was written, or provably not.
 *
 * A batch's claim commits first (markAttempts, with the batch's id and the epoch: when Postgres last
 * started). Then, on the same connection and in the same round trip, a transaction inserts the
 * batch's row and stays open. When the batch's PDUs are to be written, its COMMIT is sent, and
 * they are written in the same synchronous block, right after the COMMIT reached its socket. So:
 *
 * - the process dies before the COMMIT is sent: Postgres rolls the row back, and the claim without
 *   a row says nothing was written; the successor sends the messages;
 * - it dies after: the row commits, and what was claimed may have left; it is failed as outcome
 *   unknown, as every claim was before (a kill between the COMMIT's write and the PDUs', two
 *   system calls apart, is the only way to fail as unknown something that never left);
 * - Postgres loses the COMMIT (it crashed or was stopped before making it durable): the process is
 *   alive and records the row again (`recordWritten`); and a claim made before Postgres last
 *   started is taken as possibly written whatever its row, so a restart between the two cannot
 *   make a successor send again what was written.
 */

/** How long a row is kept: a successor comes within minutes; older claims count as possibly written. */
export const WRITE_MARK_HORIZON = '12 hours';

/** Rows older than this are deleted by the daily maintenance, well past the horizon. */
const RETENTION = '1 day';

export async function recordWritten(sql: Sql, batch: string) {
  await sql`insert into submission_writes (batch) values (${batch}) on conflict do nothing`;
}

/** Deletes up to `limit` rows a day old: claims that old count as possibly written anyway. */
export async function deleteOldWriteMarks(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from submission_writes where batch in (
      select batch from submission_writes where written_at < now() - ${RETENTION}::interval
      limit ${limit})`;
  return result.count;
}

/**
 * The open transaction holding a batch's row. `rollback` when nothing of the batch is written.
 */
export interface OpenWriteMark {
  /**
   * Sends the COMMIT and calls `write` right after postgres.js wrote it to its socket, in the same
   * synchronous block; resolves then. A COMMIT that could only be queued (its socket full) calls
   * `write` once Postgres answered. One that could not be sent at all (the connection gone)
   * rejects, `write` not called: the claim stands without its row, nothing was written. A COMMIT
   * that fails after `write` calls `lost`: the row is recorded again there. `write` must not
   * throw: it runs inside postgres.js's write.
   */
  commit(write: () => void): Promise<void>;
  rollback(): void;
}

/**
 * Runs `claim` (an autocommit statement: the batch's marking) on a connection of its own, taken
 * from the pool, then opens the batch's transaction there and inserts its row: sent together, one
 * round trip, on one backend. The connection goes back to the pool when the transaction ends.
 */
export async function claimWithWriteMark<T>(
  sql: Sql,
  batch: string,
  claim: (session: Sql) => Promise<T>,
  lost: (error: unknown) => void,
): Promise<{ claimed: T; mark: OpenWriteMark }> {
  const session = await reserveWithin(sql, CONNECTION_WAIT_MS);
  // Issued in this order in one turn, so Postgres runs (and commits) the claim first.
  return claimBeside(claim(session), openOn(session, batch, lost));
}

/**
 * Opens a batch's mark ahead of its claim: a first try's, while its campaign's save commits, so
 * that its claim is one round trip alone (activities/campaign.ts, with claimBeside).
 */
export async function openWriteMark(
  sql: Sql,
  batch: string,
  lost: (error: unknown) => void,
): Promise<OpenWriteMark> {
  return openOn(await reserveWithin(sql, CONNECTION_WAIT_MS), batch, lost);
}

/**
 * A claim and the opening of its batch's mark, made side by side. The claim's failure rolls the
 * mark back and is thrown; so is the mark's, the claim standing (a claim whose batch has no row
 * says nothing was written).
 */
export async function claimBeside<T>(
  claiming: Promise<T>,
  opening: Promise<OpenWriteMark>,
): Promise<{ claimed: T; mark: OpenWriteMark }> {
  const [claimed, opened] = await Promise.allSettled([claiming, opening]);
  if (claimed.status === 'rejected') {
    if (opened.status === 'fulfilled') opened.value.rollback();
    throw claimed.reason;
  }
  if (opened.status === 'rejected') throw opened.reason;
  return { claimed: claimed.value, mark: opened.value };
}

/**
 * What postgres.js's `onexecute` hands over: the connection a reserved session runs on. Its
 * `onclose` is how postgres.js's own transactions hear that the connection ended.
 */
interface SessionConnection {
  onclose: ((error: unknown) => void) | null;
}

/**
 * Begins the batch's transaction on `session` and inserts its row, sent together. The mark then
 * watches the session's connection: postgres.js neither answers a query sent on a connection
 * that has closed nor may such a session be released (it would go back to the pool as open).
 */
async function openOn(
  session: postgres.ReservedSql,
  batch: string,
  lost: (error: unknown) => void,
): Promise<OpenWriteMark> {
  const watched = new WatchedSession(session);
  const begin = session.unsafe('begin', [], {
    prepare: false,
    // Called once BEGIN is on its way, before any answer: a close from then on is seen.
    onexecute: (connection: SessionConnection) => {
      watched.watch(connection);
      return true;
    },
  } as postgres.UnsafeQueryOptions);
  try {
    await Promise.all([
      begin.execute(),
      session`insert into submission_writes (batch) values (${batch})`.execute(),
    ]);
    if (!watched.watching)
      throw new Error("postgres.js did not hand over a write mark's connection");
  } catch (error) {
    watched.rollback();
    throw error;
  }
  return markOn(watched, lost);
}

/** A reserved session that knows whether its connection has closed, and then never releases it. */
class WatchedSession {
  #connection: SessionConnection | undefined;
  #closed: unknown;
  readonly #onClose = (error: unknown) => {
    this.#closed = error ?? new Error("the write mark's connection closed");
  };

  constructor(readonly session: postgres.ReservedSql) {}

  watch(connection: SessionConnection) {
    this.#connection = connection;
    connection.onclose = this.#onClose;
  }

  get watching(): boolean {
    return this.#connection !== undefined;
  }

  /** The error the connection closed with, if it has. */
  get closed(): unknown {
    return this.#closed;
  }

  release() {
    if (this.#connection?.onclose === this.#onClose) this.#connection.onclose = null;
    if (!this.#closed) this.session.release();
  }

  /** Rolls the transaction back, then releases the session. */
  rollback() {
    if (this.#closed) return this.release();
    const release = () => this.release();
    this.session.unsafe('rollback').execute().then(release, release);
  }
}

/** The open transaction on `watched` as a mark: committed or rolled back once. */
function markOn(watched: WatchedSession, lost: (error: unknown) => void): OpenWriteMark {
  let ended = false;
  return {
    commit(write) {
      if (ended) return Promise.reject(new Error('the write mark was already ended'));
      ended = true;
      // Closed (Postgres ended an idle transaction, or went away): the row is gone with it.
      if (watched.closed) {
        watched.release();
        return Promise.reject(watched.closed);
      }
      return new Promise<void>((resolve, reject) => {
        let written = false;
        const writeOnce = () => {
          if (written) return;
          written = true;
          write();
          resolve();
        };
        watched.session
          .unsafe(COMMIT_WRITTEN_AT_ONCE, [], {
            prepare: false,
            // Called by postgres.js right after the COMMIT went to the socket; true: the
            // connection takes further queries.
            onexecute: () => {
              writeOnce();
              return true;
            },
          } as postgres.UnsafeQueryOptions)
          .execute()
          .then(
            () => {
              watched.release();
              writeOnce();
            },
            (error: unknown) => {
              watched.release();
              if (written) lost(error);
              else reject(error);
            },
          );
      });
    },
    rollback() {
      if (ended) return;
      ended = true;
      watched.rollback();
    },
  };
}

/**
 * postgres.js writes what a query built at its next setImmediate, and at once from 1 KiB: this
 * COMMIT is padded past that, so its write and the `onexecute` after it are one synchronous step.
 * test/integration/smpp-write-marks.test.ts checks the order on the sockets themselves.
 */
const COMMIT_WRITTEN_AT_ONCE = `commit /*${' '.repeat(1024)}*/`;

/** How long a batch waits for a connection of its own; then its claim fails like any query. */
const CONNECTION_WAIT_MS = 2_000;

/** `sql.reserve()`, given up after `ms` (a connection that comes later goes straight back). */
async function reserveWithin(sql: Sql, ms: number): Promise<postgres.ReservedSql> {
  const reserving = sql.reserve();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reserving.then(
        (late) => late.release(),
        () => {},
      );
      reject(
        new DatabaseUnavailableError(
          'No connection to Postgres became free in time.',
          'POOL_TIMEOUT',
        ),
      );
    }, ms);
  });
  try {
    return await Promise.race([reserving, expired]);
  } finally {
    clearTimeout(timer);
  }
}
