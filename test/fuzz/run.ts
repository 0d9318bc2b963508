/**
 * `npm run fuzz`: schemathesis against a running stack (docs/development.md "Fuzzing the REST API").
 * Starts the production topology as processes (the chaos suite's stack: Postgres, Temporal,
 * simulator, one api, one worker), makes a workspace with an all-abilities key and credits, and
 * runs schemathesis over /api/v1/openapi.json with every check and every phase. Prints a summary
 * (requests sent, failures by check) as one JSON line on stdout; exits 1 on any failure, a 5xx,
 * an undocumented status or a response that breaks its schema among them, or on fewer requests
 * than --min-requests.
 *
 *   npm run fuzz -- [--examples N] [--seed N] [--min-requests N] [--continue] [--keep] [--serve]
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createTenant } from '../chaos/support/api.js';
import { ChaosStack } from '../chaos/support/stack.js';
import { log } from '../chaos/support/timing.js';
import { repoRoot } from '../support/processes.js';
import { findSchemathesis, summarizeRun } from './schemathesis.js';

const { values } = parseArgs({
  options: {
    /** Cases per operation and phase: about 6,000 requests in all. */
    examples: { type: 'string', default: '600' },
    seed: { type: 'string' },
    'min-requests': { type: 'string', default: '5000' },
    /** Go on testing an operation after its first failure (every failing case counted). */
    continue: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    /** Start the stack, print its address and key, and wait for Ctrl-C (for manual runs). */
    serve: { type: 'boolean', default: false },
  },
});

const schemathesis = values.serve ? undefined : await findSchemathesis(log);
const stack = await ChaosStack.start({ apis: 1, workers: 1 });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stack.close(values.keep).finally(() => process.exit(130));
  });
}

let failed = true;
try {
  const tenant = await createTenant(stack, {
    name: 'Fuzz',
    credits: 10_000_000,
    providers: [{ slug: 'sim' }],
  });
  const apiUrl = stack.apiUrls[0] as string;
  if (values.serve) {
    log(`api ${apiUrl}  key ${tenant.token}  (Ctrl-C stops the stack)`);
    await new Promise(() => {});
  }
  const reportDir = join(stack.dataDir, 'schemathesis');
  const args = [
    '--config-file',
    join(repoRoot, 'test/fuzz/schemathesis.toml'),
    'run',
    `${apiUrl}/api/v1/openapi.json`,
    '--checks',
    'all',
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-examples',
    values.examples,
    '--request-timeout',
    '10',
    '--report',
    'ndjson',
    '--report-dir',
    reportDir,
    '--no-color',
    ...(values.seed ? ['--seed', values.seed] : []),
    ...(values.continue ? ['--continue-on-failure'] : []),
  ];
  log(`schemathesis ${args.join(' ')}`);
  const started = Date.now();
  const code = await new Promise<number>((resolve) => {
    if (!schemathesis) return;
    const child = spawn(schemathesis.command, [...schemathesis.args, ...args], {
      cwd: stack.dataDir,
      env: {
        ...process.env,
        ...schemathesis.env,
        HERALD_FUZZ_TOKEN: tenant.token,
        SCHEMATHESIS_HOOKS: join(repoRoot, 'test/fuzz/hooks.py'),
      },
      // schemathesis's report goes to stderr: stdout is the summary line.
      stdio: ['ignore', 2, 2],
    });
    child.once('exit', (exitCode) => resolve(exitCode ?? 1));
  });
  const summary = await summarizeRun(reportDir);
  const enough = summary.requests >= Number(values['min-requests']);
  const deaths = stack.deaths();
  failed = code !== 0 || summary.failures > 0 || !enough || deaths.length > 0;
  process.stdout.write(
    `${JSON.stringify({
      ok: !failed,
      schemathesis_exit: code,
      seconds: Math.round((Date.now() - started) / 1000),
      ...summary,
      ...(enough ? {} : { too_few_requests: `under ${values['min-requests']}` }),
      ...(deaths.length > 0 ? { deaths } : {}),
    })}\n`,
  );
} finally {
  // A failed run keeps its directory: schemathesis's report and every process's log.
  await stack.close(values.keep || failed);
}
process.exit(failed ? 1 : 0);
