/**
 * `npm run chaos`: faults injected into the production topology while real sends run, each
 * recipient counted at the simulator's inbox. One JSON object per scenario run on stdout, then a
 * summary; progress on stderr. Exits 1 when any invariant failed or a run could not complete.
 *
 *   npm run chaos -- [--runs N] [--only name[,name]] [--short] [--keep]
 *   npm run chaos:short            the CI subset, smaller and once each
 *   npm run drill:pumping [-- --runs 3]   the SMS-pumping drill (otp-pumping) alone, once
 *   npm run drill:backup           the backup and restore drill (backup-restore), only when named
 */
import { parseArgs } from 'node:util';
import { apiKill } from './scenarios/api-kill.js';
import { backupRestore } from './scenarios/backup-restore.js';
import { cancelDuringSend } from './scenarios/cancel-during-send.js';
import { keylessPostgresFreeze } from './scenarios/keyless-postgres-freeze.js';
import { keylessTemporalDown } from './scenarios/keyless-temporal-down.js';
import { otpPumping } from './scenarios/otp-pumping.js';
import { otpUnderLoad } from './scenarios/otp-under-load.js';
import { postgresOutage } from './scenarios/postgres-outage.js';
import { providerFaults } from './scenarios/provider-faults.js';
import { scheduledRestart } from './scenarios/scheduled-restart.js';
import { smppWorkerKill } from './scenarios/smpp-worker-kill.js';
import { temporalOutage } from './scenarios/temporal-outage.js';
import { twilioFormat } from './scenarios/twilio-format.js';
import { workerKill } from './scenarios/worker-kill.js';
import type { Scenario } from './support/scenario.js';
import { logSecretsCheck, takeLogAudits } from './support/secrets.js';
import { openStacks } from './support/stack.js';
import { log, seconds } from './support/timing.js';

const SCENARIOS: Scenario[] = [
  temporalOutage,
  postgresOutage,
  workerKill,
  smppWorkerKill,
  apiKill,
  scheduledRestart,
  cancelDuringSend,
  otpUnderLoad,
  providerFaults,
  twilioFormat,
  keylessPostgresFreeze,
  keylessTemporalDown,
  otpPumping,
  backupRestore,
];

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    only: { type: 'string' },
    short: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const short = values.short ?? false;
const runs = Number(values.runs ?? (short ? 1 : 5));
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number ≥ 1`);
const only = values.only?.split(',').map((name) => name.trim());
const unknown = only?.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
if (unknown?.length)
  throw new Error(
    `Unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`,
  );
const selected = SCENARIOS.filter((scenario) =>
  only ? only.includes(scenario.name) : !scenario.drill && (!short || scenario.short),
);

// Ctrl-C: stop every process the open stacks started before leaving.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the stacks`);
    Promise.allSettled(openStacks().map((stack) => stack.close())).finally(() => process.exit(130));
  });
}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const summary: Record<string, { runs: number; passed: number; seconds: number[] }> = {};
const suiteStarted = Date.now();
for (const scenario of selected) {
  const totals = { runs: 0, passed: 0, seconds: [] as number[] };
  summary[scenario.name] = totals;
  for (let run = 1; run <= runs; run++) {
    log(`${scenario.name}: run ${run} of ${runs}${short ? ' (short)' : ''}`);
    const started = Date.now();
    let line: Record<string, unknown>;
    try {
      const result = await scenario.run({ short, keep: values.keep ?? false, run });
      result.checks.push(logSecretsCheck(takeLogAudits()));
      const failed = result.checks.filter((c) => !c.ok).map((c) => c.name);
      line = {
        scenario: scenario.name,
        run,
        short,
        ok: failed.length === 0,
        failed_checks: failed,
        seconds: seconds(Date.now() - started),
        ...result.figures,
        checks: result.checks,
      };
    } catch (error) {
      takeLogAudits();
      line = {
        scenario: scenario.name,
        run,
        short,
        ok: false,
        error: (error as Error).stack ?? String(error),
        seconds: seconds(Date.now() - started),
      };
    }
    totals.runs++;
    if (line.ok) totals.passed++;
    totals.seconds.push(line.seconds as number);
    log(`${scenario.name}: run ${run} ${line.ok ? 'passed' : 'FAILED'} in ${line.seconds} s`);
    print(line);
  }
}
const ok = Object.values(summary).every((totals) => totals.passed === totals.runs);
print({
  summary: true,
  ok,
  short,
  runs,
  seconds: seconds(Date.now() - suiteStarted),
  scenarios: summary,
});
process.exit(ok ? 0 : 1);
