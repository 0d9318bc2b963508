import type { Actor } from '../commands/actor.js';
import { type Env, parseEnv } from '../config/env.js';
import { operatorIdentity } from '../config/operator.js';
import { resolveSecret } from '../config/secret.js';
import { createSql, type Sql } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import type { CommandResult, Options } from './admin/options.js';
import type { AdminCommand } from './admin/table.js';
import { startEmbeddedPostgres } from './embedded/postgres.js';

/** What an admin command runs against: the settings, the secret and the migrated database. */
export interface AdminConnection {
  env: Env;
  secret: string;
  sql: Sql;
}

export interface AdminContext extends AdminConnection {
  /**
   * Who the command's use-cases audit its change by: `operatorActor()` where `herald` runs it
   * (runAsOperator); a test's own actor where a test calls a command directly.
   */
  actor: Actor;
}

/** Who the use-cases audit an admin command by: the OS user who ran it, on this host. */
export function operatorActor(): Actor {
  const { user, host } = operatorIdentity();
  return { kind: 'operator', user, host };
}

/**
 * Runs `fn` with a database URL: DATABASE_URL, or the local embedded cluster (the one a running
 * `herald start` uses, or one started just for this command). A cluster started here is stopped
 * afterwards, and on Ctrl-C too (exit 130): a one-off command must not leave a server behind.
 */
export async function withDatabaseUrl<T>(env: Env, fn: (url: string) => Promise<T>): Promise<T> {
  if (env.DATABASE_URL) return fn(env.DATABASE_URL);
  let stopServer: (() => Promise<void>) | undefined;
  let stopping: Promise<void> | undefined;
  // Once, whoever asks first (a signal or the end of the command); both wait for it.
  const stop = () => {
    stopping ??= stopServer?.() ?? Promise.resolve();
    return stopping;
  };
  const onSignal = () => {
    stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const postgres = await startEmbeddedPostgres({
      dataDir: env.HERALD_DATA_DIR,
      adoptRunning: false,
      registerStop: (registered) => {
        stopServer = registered;
      },
    });
    stopServer = postgres.stop;
    return await fn(postgres.url);
  } finally {
    await stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Runs an admin command against the database of `withDatabaseUrl`, migrated first. */
export async function withAdminContext<T>(
  fn: (connection: AdminConnection) => Promise<T>,
): Promise<T> {
  const env = parseEnv();
  const secret = await resolveSecret(env);
  return withDatabaseUrl(env, async (url) => {
    const sql = createSql(url, { max: 2 });
    try {
      await migrate(sql);
      return await fn({ env, secret, sql });
    } finally {
      await sql.end();
    }
  });
}

/**
 * Runs an admin command as `herald` does: its use-cases write their audit lines, in the change's
 * transaction, by the operator.
 */
export function runAsOperator(
  connection: AdminConnection,
  command: AdminCommand,
  options: Options,
): Promise<CommandResult> {
  return command.run({ ...connection, actor: operatorActor() }, options);
}
