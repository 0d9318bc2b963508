import { type SpawnOptions, spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, collecting its output (for short-lived tools like pg_ctl). */
export function run(
  command: string,
  args: string[],
  options: SpawnOptions = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `python -m pip install --target <target> <requirement>`: how the project installs its Python
 * tools (the Temporal CLI, schemathesis) into `.tools/`. False when that Python or pip cannot.
 */
export async function pipInstall(
  python: string,
  target: string,
  requirement: string,
): Promise<boolean> {
  const args = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--upgrade'];
  const result = await run(python, [...args, '--target', target, requirement]).catch(
    () => undefined,
  );
  return result?.code === 0;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 60_000, intervalMs = 200 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
