/**
 * `npm run bench:peer [-- rounds] [-- --crash]`: Herald beside the Jasmin SMS Gateway, by the
 * benchmark in `../shared/peer/` (jasmin-vs-herald.sh, beside this repository), on a fresh git
 * worktree of the committed HEAD, so uncommitted edits never skew it. Rounds default to 3
 * (BENCH_PEER_ROUNDS too); `--crash` (or BENCH_PEER_CRASH=1) adds the kill -9 test; BENCH_TESTS
 * and JASMIN_DLR go through to the script. Its ports are fixed, so it runs under
 * `flock /tmp/peer-bench.lock`. Its files go to PEER_WORK (default $TMPDIR/herald-peer-bench,
 * kept: the venvs of the first run are reused). Prints one JSON document: per figure each
 * system's median and Herald ÷ Jasmin, and the raw rounds.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PeerRow, peerAims, peerFigures } from './support/peer-figures.js';
import { log } from './support/stack.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const script = resolve(repoRoot, '../shared/peer/jasmin-vs-herald.sh');
const LOCK = '/tmp/peer-bench.lock';

if (!existsSync(script)) {
  process.stderr.write(
    `bench:peer: ${script} is missing (the peer benchmark sits beside this repository)\n`,
  );
  process.exit(1);
}

const args = process.argv.slice(2);
const rounds = Number(args.find((arg) => /^\d+$/.test(arg)) ?? process.env.BENCH_PEER_ROUNDS ?? 3);
const crash = args.includes('--crash') || process.env.BENCH_PEER_CRASH === '1';
const work = resolve(process.env.PEER_WORK ?? join(tmpdir(), 'herald-peer-bench'));
const outputs = {
  rounds: join(work, 'results.json'),
  crash: join(work, 'results-crash.json'),
  summary: join(work, 'summary.md'),
};

function git(...gitArgs: string[]): string {
  const result = spawnSync('git', ['-C', repoRoot, ...gitArgs], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${gitArgs.join(' ')}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

function readRows(path: string): PeerRow[] {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as PeerRow[]) : [];
}

/** The script under the lock; its own output (progress, bench.py's lines, the summary) to stderr. */
function runScript(checkout: string): Promise<void> {
  const scriptArgs = [checkout, String(rounds), ...(crash ? ['--crash'] : [])];
  return new Promise((done, fail) => {
    const child = spawn('flock', [LOCK, 'bash', script, ...scriptArgs], {
      env: { ...process.env, PEER_WORK: work },
      stdio: ['ignore', 2, 2],
    });
    // Ctrl-C reaches the script too: let its trap stop what it started, then remove the worktree.
    const ignore = () => {};
    process.on('SIGINT', ignore);
    child.once('error', fail);
    child.once('close', (code) => {
      process.off('SIGINT', ignore);
      if (code === 0) done();
      else fail(new Error(`jasmin-vs-herald.sh exited with ${code}`));
    });
  });
}

const commit = git('rev-parse', 'HEAD');
const checkout = await mkdtemp(join(tmpdir(), 'herald-peer-tree-'));
git('worktree', 'add', '--detach', checkout, commit);
const started = Date.now();
try {
  symlinkSync(join(repoRoot, 'node_modules'), join(checkout, 'node_modules'));
  // The Temporal CLI the repository already found or installed (cli/embedded/temporal.ts).
  if (existsSync(join(repoRoot, '.tools')))
    symlinkSync(join(repoRoot, '.tools'), join(checkout, '.tools'));
  for (const path of Object.values(outputs)) rmSync(path, { force: true });
  log(
    `peer: ${rounds} round(s)${crash ? ' and --crash' : ''} of ${commit.slice(0, 12)} in ${checkout}; waiting for ${LOCK}`,
  );
  await runScript(checkout);
} finally {
  git('worktree', 'remove', '--force', checkout);
}

const roundRows = readRows(outputs.rounds);
const crashRows = readRows(outputs.crash);
const figures = peerFigures([...roundRows, ...crashRows]);
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'peer',
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, node: process.version },
      setup: `../shared/peer/jasmin-vs-herald.sh on a worktree of ${commit}: Herald and Jasmin 0.11.1 alternating, each through one SMPP bind to the same independent SMSC; ${rounds} round(s) of ${process.env.BENCH_TESTS ?? 'idle,throughput,latency,throttle'}${crash ? ', then kill -9 at 30 % of 3,000 once per system' : ''}`,
      commit,
      rounds,
      minutes: Math.round((Date.now() - started) / 600) / 100,
      files: { work, ...outputs },
      figures,
      aims: peerAims(figures),
      raw: { rounds: roundRows, crash: crashRows },
    },
    null,
    2,
  )}\n`,
);
