/**
 * Records one run of the daily maintenance workflow, as the workflow code in this checkout runs
 * it, for a replay test (test/unit/maintenance-replay.test.ts): a Temporal dev server of its own,
 * a worker whose activities answer 0, and the history in @temporalio/proto's object form.
 *
 *   npx tsx scripts/record-maintenance-history.ts test/fixtures/<name>.history.json
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createMaintenanceActivities } from '../activities/maintenance.js';
import { freePort } from '../cli/embedded/ports.js';
import { findTemporalCli, startTemporalDevServer } from '../cli/embedded/temporal.js';

const out = process.argv[2];
if (!out) throw new Error('usage: record-maintenance-history.ts <out.json>');
const TASK_QUEUE = 'maintenance-fixture';
const WORKFLOW_ID = 'herald-daily-maintenance';

/** Every activity answers 0 (nothing to do): the workflow's commands do not depend on counts. */
const activities = Object.fromEntries(
  Object.keys(createMaintenanceActivities({ sql: undefined as never })).map((name) => [
    name,
    async () => 0,
  ]),
);

const dataDir = await mkdtemp(join(tmpdir(), 'herald-record-'));
const server = await startTemporalDevServer({
  cli: await findTemporalCli((line) => process.stderr.write(`${line}\n`)),
  dataDir,
  port: await freePort(),
  namespace: 'default',
  persistent: false,
});
try {
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue: TASK_QUEUE,
    workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
    activities,
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const history = await worker.runUntil(async () => {
    const handle = await client.workflow.start('maintenanceWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: WORKFLOW_ID,
    });
    process.stderr.write(`result: ${JSON.stringify(await handle.result())}\n`);
    return handle.fetchHistory();
  });
  const { History } = proto.temporal.api.history.v1;
  const object = History.toObject(History.fromObject(history), {
    longs: String,
    enums: String,
    bytes: String,
  });
  await writeFile(out, `${JSON.stringify(object, null, 2)}\n`);
  await connection.close();
  await workerConnection.close();
} finally {
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
