/**
 * `npm run bench`: every benchmark on both Temporal shapes (the dev server and the cluster of
 * `npm run cluster`), each with its floors measured in the same run on the same server, the SMS
 * benchmark with one worker and with two, then the webhook-trigger benchmark (Postgres only)
 * and the metrics benchmark (their cost on and off, on the dev shape).
 * Prints one JSON document with the figures side by side
 * and each aim met or missed, and writes it, with a Markdown table, to bench/results/.
 * BENCH_SHAPES=dev (or cluster) runs one shape.
 * BENCH_PEER=1 adds the comparison with the Jasmin SMS Gateway (bench/peer.ts, about half an hour
 * for its 3 rounds, so only when asked for) as `peer`.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Figures, figureRows, markdownTable } from './support/side-by-side.js';
import { log } from './support/stack.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const shapes = (process.env.BENCH_SHAPES ?? 'dev,cluster').split(',') as ('dev' | 'cluster')[];
const PLAN = [
  { name: 'sms_1_worker', script: 'bench/sms.ts', workers: 1 },
  { name: 'sms_2_workers', script: 'bench/sms.ts', workers: 2 },
  { name: 'otp', script: 'bench/otp.ts', workers: 1 },
  { name: 'mcp', script: 'bench/mcp.ts', workers: 1 },
] as const;

/** Runs one benchmark script in its own process and parses the JSON it prints. */
function runBenchmark(script: string, env: Record<string, string>): Promise<object> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    // 'close', not 'exit': only then has all of its output been read.
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}`));
      try {
        resolve(JSON.parse(output));
      } catch {
        reject(new Error(`${script} printed no JSON: ${output.slice(0, 500)}`));
      }
    });
  });
}

const runs: Record<string, Figures> = {};
for (const shape of shapes) {
  const figures: Figures = {};
  for (const step of PLAN) {
    log(`${shape}: ${step.name}`);
    figures[step.name] = await runBenchmark(step.script, {
      BENCH_SHAPE: shape,
      BENCH_WORKERS: String(step.workers),
    });
  }
  runs[shape] = figures;
}

// Postgres only (the webhook outbox triggers): the same on either shape, so run once.
log('webhook triggers');
const webhookTriggers = await runBenchmark('bench/webhook-triggers.ts', {});
// What metrics cost: the sustained SMS load with and without them, on the dev shape.
log('metrics on and off');
const metrics = await runBenchmark('bench/metrics.ts', {});
// Herald beside Jasmin (../shared/peer/): slow, so opt-in.
let peer: object | undefined;
if (process.env.BENCH_PEER === '1') {
  log('peer: Herald beside the Jasmin SMS Gateway');
  peer = await runBenchmark('bench/peer.ts', {});
}

const rows = figureRows(runs);
const document = {
  benchmark: 'all',
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  side_by_side: rows,
  runs,
  webhook_triggers: webhookTriggers,
  metrics,
  ...(peer ? { peer } : {}),
};
const results = new URL('./results/', import.meta.url);
await mkdir(results, { recursive: true });
await writeFile(new URL('latest.json', results), `${JSON.stringify(document, null, 2)}\n`);
await writeFile(new URL('latest.md', results), `${markdownTable(rows, shapes)}\n`);
process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
