import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pipInstall } from '../../cli/embedded/processes.js';
import { repoRoot } from '../support/processes.js';

const run = promisify(execFile);

/** The version CI runs: a newer one may add checks, so it changes only by a commit. */
export const SCHEMATHESIS_VERSION = '4.32.5';

/** Installed as the Temporal CLI is (cli/embedded/temporal.ts): `pip install --target`. */
const target = join(repoRoot, '.tools', 'schemathesis');

/** How to run schemathesis: `python -c <its entry point> ...args`, the install on PYTHONPATH. */
export interface SchemathesisCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

const ENTRY_POINT =
  'import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())';

function commandFor(python: string): SchemathesisCommand {
  return { command: python, args: ['-c', ENTRY_POINT], env: { PYTHONPATH: target } };
}

async function isPinned(command: SchemathesisCommand): Promise<boolean> {
  try {
    const { stdout } = await run(command.command, [...command.args, '--version'], {
      env: { ...process.env, ...command.env },
    });
    return stdout.includes(SCHEMATHESIS_VERSION);
  } catch {
    return false;
  }
}

/** `.tools/schemathesis`, installed there with pip (PyPI) when absent or another version. */
export async function findSchemathesis(log: (line: string) => void): Promise<SchemathesisCommand> {
  for (const python of ['python3', 'python']) {
    const command = commandFor(python);
    if (await isPinned(command)) return command;
  }
  log(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${target}`);
  for (const python of ['python3', 'python']) {
    const installed = await pipInstall(python, target, `schemathesis==${SCHEMATHESIS_VERSION}`);
    if (installed && (await isPinned(commandFor(python)))) return commandFor(python);
  }
  throw new Error(
    `schemathesis could not be installed; install it with\n  python3 -m pip install --target ${target} schemathesis==${SCHEMATHESIS_VERSION}`,
  );
}

interface CheckResult {
  name: string;
  status: string;
}

interface ScenarioFinished {
  phase: string;
  status: string;
  recorder: {
    label: string;
    interactions: Record<string, unknown>;
    checks: Record<string, CheckResult[]>;
  };
}

export interface RunSummary {
  /** HTTP requests schemathesis sent and recorded (checks' own extra requests included). */
  requests: number;
  requests_by_phase: Record<string, number>;
  requests_by_operation: Record<string, number>;
  /** Checks run on responses, and how many failed, by check. */
  checks_run: number;
  failures: number;
  failures_by_check: Record<string, number>;
}

/** Counts from schemathesis's NDJSON event stream (`--report ndjson`). */
export async function summarizeRun(reportDir: string): Promise<RunSummary> {
  const files = (await readdir(reportDir)).filter((file) => file.endsWith('.ndjson'));
  const summary: RunSummary = {
    requests: 0,
    requests_by_phase: {},
    requests_by_operation: {},
    checks_run: 0,
    failures: 0,
    failures_by_check: {},
  };
  const add = (counts: Record<string, number>, key: string, n = 1) => {
    counts[key] = (counts[key] ?? 0) + n;
  };
  for (const file of files) {
    for (const line of (await readFile(join(reportDir, file), 'utf8')).split('\n')) {
      if (!line.startsWith('{"ScenarioFinished"')) continue;
      const { phase, recorder } = (JSON.parse(line) as { ScenarioFinished: ScenarioFinished })
        .ScenarioFinished;
      const requests = Object.keys(recorder.interactions ?? {}).length;
      summary.requests += requests;
      add(summary.requests_by_phase, phase, requests);
      // A stateful scenario spans operations: its label names the first.
      add(
        summary.requests_by_operation,
        phase === 'stateful' ? 'stateful' : recorder.label,
        requests,
      );
      for (const checks of Object.values(recorder.checks ?? {})) {
        for (const check of checks) {
          summary.checks_run += 1;
          if (check.status === 'success') continue;
          summary.failures += 1;
          add(summary.failures_by_check, check.name);
        }
      }
    }
  }
  return summary;
}
