import postgres from 'postgres';

/*
 * What a launcher checks and creates on a Postgres server before any pool of the service exists
 * (the embedded cluster's database, the Temporal cluster's databases and schemas). Each call is
 * on a connection of its own.
 */

/**
 * How long ending a pool lets its queries finish: a connection that failed under postgres.js's
 * type query never ends by itself (db/guarded-pool.ts, 4.).
 */
const END_GRACE_S = 5;

/** Creates the database `name` on the server at `adminUrl` unless it exists. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${name}`;
    if (!exists) await sql`create database ${sql(name)}`;
  } finally {
    await sql.end({ timeout: END_GRACE_S });
  }
}

/** Whether the database `connection` names has a table `table` (on its search path). */
export async function tableExists(
  connection: postgres.Options<Record<string, never>>,
  table: string,
): Promise<boolean> {
  const sql = postgres({ ...connection, max: 1, onnotice: () => {} });
  try {
    const [found] = await sql<{ present: boolean }[]>`
      select to_regclass(${table}) is not null as present`;
    return found?.present === true;
  } finally {
    await sql.end({ timeout: END_GRACE_S });
  }
}
