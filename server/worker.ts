import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogEntry,
  NativeConnection,
  Runtime,
  Worker,
} from '@temporalio/worker';
import { createChunkRunner } from '../activities/campaign.js';
import { createFirstTries } from '../activities/first-try.js';
import { type ActivityDeps, createActivities } from '../activities/index.js';
import { createOtpSubmitter } from '../activities/otp.js';
import { OtpFirst } from '../activities/otp-first.js';
import { createSmppSessions } from '../activities/smpp-binds.js';
import type { FirstTries } from '../commands/deps.js';
import { redactSecrets } from '../security/log-redaction.js';
import { jsonLogLine } from '../telemetry/log-lines.js';
import { colocatedClient } from '../temporal/client.js';
import { startHelpReplyWorkflow } from '../temporal/workflow-starts.js';
import { OTP_TASK_QUEUE, TASK_QUEUE, WEBHOOK_TASK_QUEUE } from '../workflows/definitions.js';
import { startPausedCampaignSweeper } from './paused-campaigns.js';
import { startWebhookDispatcher } from './webhook-dispatcher.js';
import { tracingWorkerOptions, tracingWorkflowModules } from './worker-tracing.js';

// The TypeScript sources under tsx; the compiled tree (npm run build) in the production image.
const workflowsPath = fileURLToPath(
  new URL(`../workflows/index${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/**
 * Activities one worker runs at once on the main queue (campaign chunks, up to 50 submissions in
 * flight each: 200 in all, what the straight-to-simulator baseline needs for its full rate).
 * Bounded, so that when campaigns back up their chunks wait in Temporal, where fairness keys
 * share the free slots between workspaces, and the provider is not flooded with submissions
 * that only queue there, ahead of an OTP.
 */
const MAIN_ACTIVITY_SLOTS = 4;

/**
 * Small campaigns' first tries run at once, beside their start (activities/first-try.ts) and as
 * local activities (workflows/campaign.ts), this many of each; one that finds every slot taken
 * goes to the main queue's fair slots instead.
 */
const FIRST_TRIES = 8;

/**
 * How long activities in flight may run on once shutdown begins (SIGTERM, Ctrl-C) before they are
 * cancelled: a chunk cut off mid-submission leaves messages whose outcome only a provider that
 * looks messages up can settle (Twilio cannot: they would fail as unknown). Below compose's
 * stop_grace_period (30 s) and the chart's terminationGracePeriodSeconds (60 s).
 */
const SHUTDOWN_GRACE_TIME = '20s';

let runtimeInstalled = false;

/** Herald shuts its worker and api down itself, in order: the Runtime must not take the signals. */
export function installTemporalRuntime(options: { sdkMetricsAddress?: string } = {}): void {
  if (runtimeInstalled) return;
  Runtime.install({
    shutdownSignals: [],
    // WARN keeps the workflow bundler's build report out of the service log.
    logger: new DefaultLogger('WARN', writeJsonRedacted),
    ...(options.sdkMetricsAddress && {
      telemetryOptions: {
        metrics: {
          prometheus: { bindAddress: options.sdkMetricsAddress, useSecondsForDurations: true },
        },
      },
    }),
  });
  runtimeInstalled = true;
}

/**
 * One JSON line a log entry, as the api writes (telemetry/log-lines.ts), to stderr, with secrets
 * redacted: an activity's failure may quote a URL (a webhook endpoint's query, an opt-out link).
 */
function writeJsonRedacted(entry: LogEntry): void {
  process.stderr.write(redactSecrets(jsonLogLine(entry)));
}

export interface RunningWorker {
  /** Settles when the worker stops; rejects if it fails. */
  done: Promise<void>;
  /** Stops polling, lets in-flight tasks finish, then closes the connection. */
  shutdown(): Promise<void>;
  /**
   * A client on the worker's connection, for the api of the same process: the campaigns it
   * starts are started eagerly, on this worker (temporal/client.ts colocatedClient).
   */
  colocatedClient: Client;
  /**
   * For the api of the same process: starts a small campaign's first try the moment it is saved,
   * through this worker's providers and binds, beside its start (activities/first-try.ts).
   */
  firstTries: FirstTries;
}

export async function startHeraldWorker(
  options: ActivityDeps & {
    address: string;
    namespace: string;
    /** Run the webhook outbox dispatcher beside the worker (default true). */
    webhookDispatcher?: boolean;
    /** Dispatch campaigns left paused, every this many ms (default 5 s; 0: not at all). */
    pausedCampaignSweepMs?: number;
    /** Main-queue activities run at once (default MAIN_ACTIVITY_SLOTS). */
    mainActivitySlots?: number;
    /** host:port where the Temporal Runtime serves its worker metrics (METRICS_PORT is set). */
    sdkMetricsAddress?: string;
  },
): Promise<RunningWorker> {
  installTemporalRuntime({ sdkMetricsAddress: options.sdkMetricsAddress });
  const connection = await NativeConnection.connect({ address: options.address });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: tracingWorkflowModules(),
    logger: Runtime.instance().logger,
  });
  // SMPP binds live as long as the worker: its activities submit through them, and they are
  // unbound once its last activity has finished. Given ones (a test's) are the caller's to close.
  const logger = Runtime.instance().logger;
  // HELP answers to replies that arrive over the binds are started through it.
  const replyClient = new Client({ connection, namespace: options.namespace });
  const smppSessions =
    options.smppSessions ??
    createSmppSessions({
      sql: options.sql,
      secret: options.secret,
      startHelpReply: (reply) => startHelpReplyWorkflow(replyClient, reply),
      log: (level, message) => logger[level](message),
    });
  // One per worker process: its codes go before its campaign batches, however they are run.
  const otpFirst = new OtpFirst();
  const runChunk = createChunkRunner({ ...options, smppSessions, otpFirst });
  const submitter = createOtpSubmitter({ ...options, smppSessions, otpFirst });
  const activities = createActivities(
    { ...options, smppSessions },
    { otpFirst, runChunk, submitter },
  );
  const firstTries = createFirstTries({ ...options, smppSessions }, runChunk, submitter, {
    slots: FIRST_TRIES,
    log: (message) => logger.warn(message),
  });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: TASK_QUEUE,
    workflowBundle,
    activities,
    ...tracingWorkerOptions(),
    maxConcurrentActivityTaskExecutions: options.mainActivitySlots ?? MAIN_ACTIVITY_SLOTS,
    maxConcurrentLocalActivityExecutions: FIRST_TRIES,
    shutdownGraceTime: SHUTDOWN_GRACE_TIME,
  });
  // OTP requests and webhook deliveries: slots of their own, never behind campaign chunks.
  const [otpWorker, webhookWorker] = await Promise.all(
    [OTP_TASK_QUEUE, WEBHOOK_TASK_QUEUE].map((taskQueue) =>
      Worker.create({
        connection,
        namespace: options.namespace,
        taskQueue,
        workflowBundle,
        activities,
        ...tracingWorkerOptions(),
        shutdownGraceTime: SHUTDOWN_GRACE_TIME,
      }),
    ),
  );
  if (!options.smppSessions) await smppSessions.start();
  const dispatcher =
    options.webhookDispatcher === false
      ? undefined
      : startWebhookDispatcher({
          sql: options.sql,
          client: new Client({ connection, namespace: options.namespace }),
        });
  const sweeper =
    options.pausedCampaignSweepMs === 0
      ? undefined
      : startPausedCampaignSweeper({
          sql: options.sql,
          client: new Client({ connection, namespace: options.namespace }),
          intervalMs: options.pausedCampaignSweepMs,
        });
  const running = [worker, otpWorker, webhookWorker] as Worker[];
  const stopAll = () => {
    for (const each of running) if (each.getState() === 'RUNNING') each.shutdown();
  };
  // One worker failing stops the other: the process is a worker of both queues or of neither.
  const done = Promise.all(
    running.map((each) =>
      each.run().catch((error) => {
        stopAll();
        throw error;
      }),
    ),
  )
    .then(() => undefined)
    .finally(async () => {
      await Promise.all([dispatcher?.stop(), sweeper?.stop(), firstTries.drain()]);
      if (!options.smppSessions) await smppSessions.close();
    })
    .finally(() => connection.close());
  return {
    done,
    colocatedClient: colocatedClient(connection, options.namespace),
    firstTries,
    async shutdown() {
      await Promise.all([dispatcher?.stop(), sweeper?.stop()]);
      stopAll();
      await done;
    },
  };
}
