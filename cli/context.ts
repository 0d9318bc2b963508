import { type Env, parseEnv } from '../config/env.js';
import { resolveSecret } from '../config/secret.js';
import { createSql, type Sql } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { startEmbeddedPostgres } from './embedded/postgres.js';

export interface AdminContext {
  env: Env;
  secret: string;
  sql: Sql;
}

/**
 * Runs an admin command against DATABASE_URL, or against the local embedded cluster: the one a
 * running `herald start` uses, or one started just for this command.
 */
export async function withAdminContext<T>(fn: (context: AdminContext) => Promise<T>): Promise<T> {
  const env = parseEnv();
  const secret = await resolveSecret(env);
  const embedded = env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: env.HERALD_DATA_DIR, adoptRunning: false });
  const sql = createSql(env.DATABASE_URL ?? (embedded?.url as string), { max: 2 });
  try {
    await migrate(sql);
    return await fn({ env, secret, sql });
  } finally {
    await sql.end();
    await embedded?.stop();
  }
}
