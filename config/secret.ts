import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type Env } from './env.js';

/**
 * HERALD_SECRET from the environment, or (outside production) one generated once into the data
 * directory so every local process — launcher, `herald api`, `herald worker`, the CLI — shares it.
 */
export async function resolveSecret(env: Env): Promise<string> {
  if (env.HERALD_SECRET) return env.HERALD_SECRET;
  if (env.NODE_ENV === 'production') {
    throw new ConfigError('Invalid environment:\n  HERALD_SECRET: required in production');
  }
  const file = join(env.HERALD_DATA_DIR, 'secret');
  await mkdir(env.HERALD_DATA_DIR, { recursive: true });
  try {
    // 'wx' fails if another process created it first; then both read the same file.
    await writeFile(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return (await readFile(file, 'utf8')).trim();
}
