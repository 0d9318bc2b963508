import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ensureStopped,
  type HeraldProcess,
  httpGet,
  launcherEnv,
  leftoverProcesses,
  repoRoot,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';

/**
 * The README's quickstart as a new user follows it: `npm start` on ports of its own (set the way
 * the README tells a user whose ports are taken), then every other shell block of the section, in
 * order, in one bash session. A wrong command fails it: each outcome is checked where it lands
 * (the simulator's inbox for the SMS, the verify answer for the OTP).
 */

const SECTION = '## Quickstart';

/** The ```sh blocks of the README's quickstart section, in order. */
async function quickstartBlocks(): Promise<string[]> {
  const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${SECTION}`);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

function runBash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: repoRoot, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the README quickstart', { timeout: 150_000 }, () => {
  let dataDir: string | undefined;
  let launcher: HeraldProcess | undefined;

  afterAll(async () => {
    await ensureStopped(launcher);
    if (dataDir) {
      expect(await leftoverProcesses(dataDir)).toEqual([]);
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('takes a fresh clone to an SMS at three phones and a verified OTP', async () => {
    const [startBlock, ...steps] = await quickstartBlocks();
    // The first block starts Herald; the test runs the same script with the ports it chose.
    expect(startBlock?.trim()).toBe('npm start');
    const packageJson = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8'));
    expect(packageJson.scripts.start).toBe('node bin/herald.js start');
    expect(steps.length).toBeGreaterThanOrEqual(4);

    dataDir = await mkdtemp(join(tmpdir(), 'herald-quickstart-'));
    const { env, ports } = await launcherEnv(dataDir);
    launcher = spawnHerald(['start'], env);
    await untilRunning(launcher);

    const run = await runBash(['set -euo pipefail', ...steps].join('\n'), env);
    const transcript = `exit ${run.code}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;
    expect(run.code, transcript).toBe(0);
    expect(run.stdout.trim().split('\n').at(-1), transcript).toBe(
      '{"message":"The code is verified."}',
    );

    const simulator = `http://127.0.0.1:${ports.simulatorPort}`;
    const smsAt = (number: string) =>
      waitUntil(
        `the SMS at ${number}`,
        async () => {
          const inbox = await httpGet(`${simulator}/v1/inbox?to=${encodeURIComponent(number)}`);
          const { messages } = inbox.body as { messages: { body: string }[] };
          return messages.length > 0 ? messages.map(({ body }) => body) : undefined;
        },
        { timeoutMs: 20_000, proc: launcher },
      );
    const recipients = ['+61412345671', '+61412345672', '+61412345673'];
    for (const number of recipients) {
      expect(await smsAt(number), transcript).toEqual(['Hello from Herald']);
    }
  });
});
