/**
 * Where a running `herald start` can be reached, for the commands of a second terminal. The
 * launcher writes `<HERALD_DATA_DIR>/stack.json` once it is running and removes it when it stops;
 * a command that needs Temporal (`campaign create`, `resume`, `cancel`) reads it when
 * TEMPORAL_ADDRESS is unset, so a stack on custom ports (PORT=..., TEMPORAL_DEV_PORT=...) is
 * found without repeating them. A file left by a launcher that died is ignored: its pid is gone.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface RunningStack {
  pid: number;
  /** PUBLIC_URL of the api: the base of the opt-out links a campaign's messages carry. */
  publicUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
}

export const stackFileOf = (dataDir: string) => join(dataDir, 'stack.json');

export async function writeStackFile(
  dataDir: string,
  stack: RunningStack,
): Promise<() => Promise<void>> {
  const file = stackFileOf(dataDir);
  // With DATABASE_URL and TEMPORAL_ADDRESS set, nothing else may have made the directory.
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(stack, null, 2)}\n`);
  return () => rm(file, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // Another user's process is alive too.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The stack `herald start` runs on `dataDir`, or undefined when none runs there. */
export async function findRunningStack(dataDir: string): Promise<RunningStack | undefined> {
  let stack: Partial<RunningStack>;
  try {
    stack = JSON.parse(await readFile(stackFileOf(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
  const complete =
    typeof stack.pid === 'number' &&
    typeof stack.publicUrl === 'string' &&
    typeof stack.temporalAddress === 'string' &&
    typeof stack.temporalNamespace === 'string';
  return complete && isAlive(stack.pid as number) ? (stack as RunningStack) : undefined;
}
