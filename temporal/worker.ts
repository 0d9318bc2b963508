import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../activities/index.js';
import { acquireSmppSessions, releaseSmppSessions } from '../providers/smpp/sessions.js';
import { TASK_QUEUE } from '../workflows/definitions.js';
import { startWebhookDispatcher } from './webhook-dispatcher.js';

const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let runtimeInstalled = false;

/** Herald shuts its worker and api down itself, in order: the Runtime must not take the signals. */
export function installTemporalRuntime(): void {
  if (runtimeInstalled) return;
  // WARN keeps the workflow bundler's build report out of the service log.
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
}

export interface RunningWorker {
  /** Settles when the worker stops; rejects if it fails. */
  done: Promise<void>;
  /** Stops polling, lets in-flight tasks finish, then closes the connection. */
  shutdown(): Promise<void>;
}

export async function startHeraldWorker(
  options: ActivityDeps & {
    address: string;
    namespace: string;
    /** Run the webhook outbox dispatcher beside the worker (default true). */
    webhookDispatcher?: boolean;
  },
): Promise<RunningWorker> {
  installTemporalRuntime();
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: TASK_QUEUE,
    workflowsPath,
    activities: createActivities(options),
  });
  // SMPP binds live as long as the worker: unbound once its last activity has finished.
  const logger = Runtime.instance().logger;
  await acquireSmppSessions({
    sql: options.sql,
    secret: options.secret,
    log: (level, message) => logger[level](message),
  });
  const dispatcher =
    options.webhookDispatcher === false
      ? undefined
      : startWebhookDispatcher({
          sql: options.sql,
          client: new Client({ connection, namespace: options.namespace }),
        });
  const done = worker
    .run()
    .finally(async () => {
      await dispatcher?.stop();
      await releaseSmppSessions();
    })
    .finally(() => connection.close());
  return {
    done,
    async shutdown() {
      await dispatcher?.stop();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
