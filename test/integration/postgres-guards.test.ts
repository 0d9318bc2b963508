/**
 * db/client.ts's guards, against the run's real Postgres: a transaction whose session is killed
 * neither crashes the process (postgres.js 3.4.9 writes its ROLLBACK to a connection without a
 * socket: an uncaught TypeError, which fails this run) nor runs its later statements on the
 * reconnected session; and calls fail at once while Postgres cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSql, type Sql } from '../../db/client.js';
import { freePorts } from '../support/processes.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the Postgres pool when a session dies', () => {
  let sql: Sql;
  let killer: Sql;
  const table = `guard_test_${process.pid}_${Date.now().toString(36)}`;

  beforeAll(async () => {
    // One connection: whatever runs next reuses the killed transaction's connection.
    sql = createSql(inject('databaseUrl'), { max: 1 });
    killer = createSql(inject('databaseUrl'), { max: 1 });
    await killer.unsafe(`create table ${table} (v int)`);
  });

  afterAll(async () => {
    await killer?.unsafe(`drop table if exists ${table}`);
    await sql?.end();
    await killer?.end();
  });

  /**
   * postgres.js 3.4.9 keeps a killed session's error and hands it to the next query on that
   * connection once it reconnected (porsager/postgres#1215): that one query fails with 57P01.
   */
  async function nextQueryAfterKill() {
    const outcome = await sql`select 1 as one`.then(
      (result) => result,
      (error: { code?: string }) => error.code,
    );
    expect([[{ one: 1 }], '57P01']).toContainEqual(outcome);
  }

  async function rows(): Promise<number[]> {
    const found = await killer.unsafe<{ v: number }[]>(`select v from ${table} order by v`);
    return found.map((row) => row.v);
  }

  it('fails a transaction whose query was running when its session was killed, and goes on', async () => {
    let pid = 0;
    const transaction = sql.begin(async (tx) => {
      pid = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid ?? -1;
      await tx.unsafe(`insert into ${table} values (1)`);
      await tx`select pg_sleep(2)`;
    });
    // Awaited from before the kill: the rejection can come before the killer's own answer.
    const refused = expect(transaction).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    while (pid === 0) await sleep(20);
    await killer`select pg_terminate_backend(${pid})`;
    await refused;
    // Time for the immediate that crashed the process before the guard.
    await sleep(200);
    await nextQueryAfterKill();
    expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
    expect(await rows()).toEqual([]);
  });

  it('refuses the later statements of a transaction whose session was killed while it waited', async () => {
    let pid = 0;
    let later: unknown;
    const transaction = sql.begin(async (tx) => {
      pid = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid ?? -1;
      await tx.unsafe(`insert into ${table} values (2)`);
      await sleep(1_000);
      try {
        await tx.unsafe(`insert into ${table} values (3)`);
      } catch (error) {
        later = error;
        throw error;
      }
    });
    const refused = expect(transaction).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    while (pid === 0) await sleep(20);
    await killer`select pg_terminate_backend(${pid})`;
    await refused;
    // The pool reconnects its one connection while the transaction's callback still waits.
    await nextQueryAfterKill();
    expect(await sql`select 2 as two`).toEqual([{ two: 2 }]);
    await sleep(1_500);
    expect(later).toMatchObject({ code: 'CONNECTION_CLOSED' });
    // Neither insert survived: the first was rolled back with its session, the second refused.
    expect(await rows()).toEqual([]);
    expect(await sql`select 3 as three`).toEqual([{ three: 3 }]);
  });

  it('commits a transaction, and rolls back one whose callback fails', async () => {
    await sql.begin(async (tx) => {
      await tx.unsafe(`insert into ${table} values (10)`);
    });
    await expect(
      sql.begin(async (tx) => {
        await tx.unsafe(`insert into ${table} values (11)`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await rows()).toEqual([10]);
  });
});

describe('the Postgres pool when Postgres cannot be reached', () => {
  it('fails the first call with the refusal and later ones at once, without queueing', async () => {
    const [port] = (await freePorts(1)) as [number];
    const sql = createSql(`postgres://herald:secret@127.0.0.1:${port}/herald`, { max: 2 });
    try {
      await expect(sql`select 1`).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      const started = Date.now();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 50 }, async () => sql`select 1`),
      );
      expect(Date.now() - started).toBeLessThan(100);
      expect(
        outcomes.map((outcome) => outcome.status === 'rejected' && outcome.reason.code),
      ).toEqual(Array(50).fill('DATABASE_UNAVAILABLE'));
      await expect(sql.begin(async () => 'never')).rejects.toMatchObject({
        code: 'DATABASE_UNAVAILABLE',
      });
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
