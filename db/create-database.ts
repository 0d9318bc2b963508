import postgres from 'postgres';

/**
 * Creates the database `name` on the server at `adminUrl` unless it exists: the first start of
 * an embedded cluster. On a connection of its own, before any pool of the service exists.
 */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${name}`;
    if (!exists) await sql`create database ${sql(name)}`;
  } finally {
    await sql.end();
  }
}
