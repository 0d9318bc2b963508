import type { Sql } from './client.js';

/** A sign-in subject (an account, a client address or the pair, as a keyed hash) and its limit. */
export interface ThrottledSubject {
  subject: Buffer;
  limit: number;
}

export type SignInAdmission =
  | { admitted: true; attemptIds: number[] }
  | { admitted: false; retryAfterSeconds: number };

/**
 * Admits a password check unless a subject already has `limit` failures within the window, and
 * then records the attempt as a failure of every subject before the password is checked: under
 * any concurrency, across api replicas, no more checks run than the limit allows. A check that
 * succeeds takes its records back (forgetAttempt). The subjects are locked in the order given.
 */
export async function admitSignInAttempt(
  sql: Sql,
  subjects: ThrottledSubject[],
  windowSeconds: number,
): Promise<SignInAdmission> {
  return sql.begin(async (tx) => {
    let retryAfterSeconds = 0;
    for (const { subject, limit } of subjects) {
      await tx`select pg_advisory_xact_lock(hashtextextended(${subject.toString('hex')}, 1201))`;
      // The failure whose expiry brings the subject back under its limit.
      const [row] = await tx<{ retryAfter: number }[]>`
        select ceil(extract(epoch from
          failed_at + make_interval(secs => ${windowSeconds}) - clock_timestamp()))::int
          as retry_after
        from sign_in_failures
        where subject = ${subject}
          and failed_at > clock_timestamp() - make_interval(secs => ${windowSeconds})
        order by failed_at desc offset ${limit - 1} limit 1`;
      if (row) retryAfterSeconds = Math.max(retryAfterSeconds, row.retryAfter, 1);
    }
    if (retryAfterSeconds > 0) return { admitted: false, retryAfterSeconds };
    const rows = await tx<{ id: number }[]>`
      insert into sign_in_failures (subject, failed_at)
      select decode(hex, 'hex'), clock_timestamp()
      -- postgres.js sends an array of Buffers as one bytea, not bytea[]: the hashes travel as hex.
      from unnest(${subjects.map(({ subject }) => subject.toString('hex'))}::text[]) as hex
      returning id`;
    return { admitted: true, attemptIds: rows.map((row) => Number(row.id)) };
  });
}

/** The attempt's password was right: it was not a failure after all. */
export async function forgetAttempt(sql: Sql, attemptIds: number[]): Promise<void> {
  await sql`delete from sign_in_failures where id = any(${attemptIds}::bigint[])`;
}

/** Failures recorded more than `olderThanSeconds` ago, up to `limit` rows; returns how many. */
export async function deleteOldSignInFailures(
  sql: Sql,
  olderThanSeconds: number,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from sign_in_failures where id in (
      select id from sign_in_failures
      where failed_at < now() - make_interval(secs => ${olderThanSeconds})
      limit ${limit})`;
  return result.count;
}
