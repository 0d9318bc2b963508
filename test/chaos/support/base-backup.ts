import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { run } from '../../../cli/embedded/processes.js';

/**
 * A base backup of a running Postgres server: every database it holds (Herald's, Temporal's and
 * Temporal's visibility) at one instant, as `pg_basebackup` takes it, done here with the server's
 * own low-level API (pg_backup_start, a copy of the data folder, pg_backup_stop) because this
 * machine has no pg_basebackup as new as the embedded server (Debian 12 ships 15; the server is
 * 16). The copy is inconsistent on its own; the WAL written while it ran, copied after
 * pg_backup_stop, and the backup label make the restored server replay it to a consistent state.
 */

/** Files of the running server that a backup leaves out. */
const SKIPPED_FILES = ['postmaster.pid', 'postmaster.opts'];

export interface BaseBackup {
  /** The copy of the cluster folder, ready to start (backup_label written). */
  clusterDir: string;
  /** The WAL position the backup is consistent from once replayed up to. */
  stopLsn: string;
}

/**
 * Takes a base backup of the server at `url` (a superuser) whose data folder is `clusterDir`,
 * into `target` (a new folder). `cp -a` keeps the server user's ownership and modes.
 */
export async function takeBaseBackup(
  url: string,
  clusterDir: string,
  target: string,
): Promise<BaseBackup> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    // One session from start to stop: a non-exclusive backup ends when its session does.
    const session = await sql.reserve();
    try {
      await session`select pg_backup_start('herald-backup-drill', true)`;
      await rm(target, { recursive: true, force: true });
      await mkdir(join(target, '..'), { recursive: true });
      await copy(clusterDir, target);
      const [stopped] = await session<{ lsn: string; labelfile: string; spcmapfile: string }[]>`
        select lsn::text, labelfile, spcmapfile from pg_backup_stop(false)`;
      if (!stopped) throw new Error('pg_backup_stop returned nothing');
      // Every WAL segment up to the backup's end: what the restored server replays.
      await copy(join(clusterDir, 'pg_wal'), join(target, 'pg_wal'), ['-T']);
      for (const file of SKIPPED_FILES) await rm(join(target, file), { force: true });
      await writeFile(join(target, 'backup_label'), stopped.labelfile);
      if (stopped.spcmapfile) await writeFile(join(target, 'tablespace_map'), stopped.spcmapfile);
      await matchOwner(clusterDir, target);
      return { clusterDir: target, stopLsn: stopped.lsn };
    } finally {
      session.release();
    }
  } finally {
    await sql.end({ timeout: 2 });
  }
}

async function copy(from: string, to: string, flags: string[] = []): Promise<void> {
  const copied = await run('cp', ['-a', ...flags, from, to]);
  if (copied.code !== 0) throw new Error(`cp ${from} failed: ${copied.stderr}`);
}

/** Files written here (the label) belong to the server's user, like the rest of the copy. */
async function matchOwner(original: string, copyDir: string): Promise<void> {
  const owner = (await run('stat', ['-c', '%u:%g', original])).stdout.trim();
  const chowned = await run('chown', ['-R', owner, copyDir]);
  if (chowned.code !== 0) throw new Error(`chown ${copyDir} failed: ${chowned.stderr}`);
}
