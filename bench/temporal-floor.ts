/**
 * `npm run bench:floor`: Temporal's own floor alone (bench/floor/measure.ts), on the server at
 * TEMPORAL_ADDRESS, or on a dev server started for the run. Prints JSON.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../cli/embedded/ports.js';
import { findTemporalCli, startTemporalDevServer } from '../cli/embedded/temporal.js';
import { measureTemporalFloor } from './floor/measure.js';
import { log } from './support/stack.js';

const given = process.env.TEMPORAL_ADDRESS;
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const dataDir = given ? undefined : await mkdtemp(join(tmpdir(), 'herald-floor-'));
const devServer = dataDir
  ? await startTemporalDevServer({
      cli: await findTemporalCli(log),
      dataDir,
      port: await freePort(),
      namespace,
      persistent: false,
    })
  : undefined;
try {
  const address = given ?? (devServer?.address as string);
  log(`measuring Temporal's floor on ${address}`);
  const floor = await measureTemporalFloor(address, namespace);
  const result = {
    benchmark: 'temporal-floor',
    machine: { cpus: cpus().length, node: process.version },
    server: given ? address : 'Temporal dev server',
    ...floor,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await devServer?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
