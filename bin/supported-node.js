// On a Node older than the floor, in a checkout: run the same command on the Node that
// scripts/ensure-node.sh finds or installs (Node 22 from the npm registry into .tools/node22), so
// `npm ci && npm start` works on a machine whose own node is older. Plain JavaScript, no
// dependency: it runs on the old Node.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeRange } from './node-version.js';

const ensureNode = fileURLToPath(new URL('../scripts/ensure-node.sh', import.meta.url));
/** Set for the re-run: should that Node be too old as well, refuse rather than loop. */
const RERUN = 'HERALD_SUPPORTED_NODE_RERUN';

/** Refuses with `refusal` where no supported Node can be had; else runs argv there and exits as it does. */
export async function runOnSupportedNode(refusal) {
  if (!existsSync(ensureNode) || process.env[RERUN]) {
    console.error(refusal);
    process.exit(1);
  }
  let bin;
  try {
    bin = execFileSync('bash', [ensureNode], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  } catch {
    console.error(refusal);
    process.exit(1);
  }
  const node = join(bin, 'node');
  console.error(
    `Herald needs Node ${nodeRange}; this is ${process.versions.node}: running on ${node} (scripts/ensure-node.sh).`,
  );
  // Its own process group, so a terminal's Ctrl-C reaches it once, forwarded from here. The IPC
  // channel tells it when this process is gone (bin/herald.js): a SIGKILL of the launcher, which
  // cannot be forwarded, then ends it too, as it would have in the same group.
  const child = spawn(node, process.argv.slice(1), {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, [RERUN]: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
  });
}
