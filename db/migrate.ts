import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Sql } from './client.js';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));
const MIGRATION_LOCK = 'herald.migrations';

export interface AppliedMigration {
  version: number;
  name: string;
}

async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file)).sort();
}

/** Migrations this code has that the database has not applied (all of them on a new database). */
export async function pendingMigrations(sql: Sql): Promise<string[]> {
  const [{ exists }] = (await sql`
    select to_regclass('schema_migrations') is not null as exists`) as [{ exists: boolean }];
  const done = new Set(
    exists
      ? (await sql<{ version: number }[]>`select version from schema_migrations`).map(
          (row) => row.version,
        )
      : [],
  );
  return (await migrationFiles()).filter((file) => !done.has(Number(file.slice(0, 4))));
}

/** Applies pending forward-only migrations in order; concurrent starters wait on an advisory lock. */
export async function migrate(sql: Sql): Promise<AppliedMigration[]> {
  const files = await migrationFiles();
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${MIGRATION_LOCK}))`;
    await tx`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`;
    const done = new Set(
      (await tx<{ version: number }[]>`select version from schema_migrations`).map(
        (row) => row.version,
      ),
    );
    const applied: AppliedMigration[] = [];
    for (const file of files) {
      const version = Number(file.slice(0, 4));
      if (done.has(version)) continue;
      await tx.unsafe(await readFile(migrationsDir + file, 'utf8'));
      await tx`insert into schema_migrations (version, name) values (${version}, ${file})`;
      applied.push({ version, name: file });
    }
    return applied;
  });
}
