/**
 * The floor's worker, its own process as Herald's worker is: `tsx bench/floor/worker.ts
 * <address> <namespace> <task queue>`. Prints `ready` once polling; SIGINT stops it.
 */
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.js';

const [address, namespace, taskQueue] = process.argv.slice(2) as [string, string, string];
Runtime.install({ shutdownSignals: ['SIGINT', 'SIGTERM'], logger: new DefaultLogger('WARN') });
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  namespace,
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities,
});
const running = worker.run();
process.stdout.write('ready\n');
await running;
await connection.close();
