/**
 * Records histories of Herald's workflows, as the workflow code in this checkout runs them, for
 * the replay test (test/unit/workflow-replay.test.ts). Each scenario is started the way Herald
 * starts it (temporal/workflow-starts.ts: ids, task queues, search attributes, memo) on a Temporal
 * dev server of its own, and runs the real workflow against scripted activities: the replay checks
 * workflow code only, so what matters is the sequence of commands, not what an activity did.
 * Scenarios whose timers run for days are recorded on the time-skipping test server instead.
 *
 *   npx tsx scripts/record-workflow-histories.ts                      lists the scenarios
 *   npx tsx scripts/record-workflow-histories.ts all                  records every scenario not recorded yet
 *   npx tsx scripts/record-workflow-histories.ts otp-reconciled ...   records these
 *   npx tsx scripts/record-workflow-histories.ts otp-reconciled=otp-reconciled-v2
 *
 * Each lands in test/fixtures/<scenario or the name after =>.history.json. An existing fixture is
 * kept unless --replace is given: it stands for runs of an older version that may still be open
 * (docs/development.md, "Changing a workflow safely").
 */
import { execFile } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { Activities } from '../activities/index.js';
import { freePort } from '../cli/embedded/ports.js';
import { findTemporalCli, startTemporalDevServer } from '../cli/embedded/temporal.js';
import {
  startCampaignWorkflow,
  startHelpReplyWorkflow,
  startOtpWorkflow,
  startWebhookWorkflow,
} from '../temporal/workflow-starts.js';
import { startTimeSkippingEnvironment } from '../test/support/time-skipping.js';
import {
  CAMPAIGN_CANCELED_SIGNAL,
  campaignWorkflowId,
  helpReplyWorkflowId,
  OTP_TASK_QUEUE,
  otpWorkflowId,
  searchAttributes,
  TASK_QUEUE,
  WEBHOOK_TASK_QUEUE,
  webhookLaneWorkflowId,
} from '../workflows/definitions.js';

const FIXTURES = fileURLToPath(new URL('../test/fixtures/', import.meta.url));
const WORKSPACE_ID = 1;

/** Per-run scripts, keyed by what the workflow passes its activities. */
const campaignUnsettled = new Map<number, number>();
/** Per campaign, how long its chunks' runs leave messages waiting for quiet hours, in turn. */
const campaignHolds = new Map<number, number[]>();
const otpScripts = new Map<
  string,
  { submit: 'pending' | 'accepted' | 'failed'; reconcile: ('pending' | 'accepted')[]; end: string }
>();
const webhookScripts = new Map<string, ('delivered' | 'failed' | 'skipped')[]>();

const answerZero = async () => 0;
let reconciledBatches = 0;
const activities: Partial<Activities> = {
  planCampaign: async ({ campaignId }) => ({ total: campaignUnsettled.get(campaignId) ?? 0 }),
  // Uneven durations, so that lanes take chunks in an order other than their own; the chunk that
  // settles the last message completes the campaign, as activities/campaign.ts does.
  submitChunk: async ({ campaignId, fromSeq, toSeq }) => {
    await sleep((toSeq % 3) * 150);
    const hold = campaignHolds.get(campaignId)?.shift();
    if (hold !== undefined)
      return { completed: false, heldUntil: new Date(Date.now() + hold).toISOString() };
    const unsettled = (campaignUnsettled.get(campaignId) ?? 0) - (toSeq - fromSeq + 1);
    campaignUnsettled.set(campaignId, unsettled);
    return { completed: unsettled === 0 };
  },
  completeCampaign: async () => {},
  beginScheduledCampaign: async () => 'queued',
  sendHelpReply: async () => 'sent',
  submitOtp: async ({ requestId }) => ({ status: otpScripts.get(requestId)?.submit ?? 'failed' }),
  reconcileOtp: async ({ requestId }) => ({
    status: otpScripts.get(requestId)?.reconcile.shift() ?? 'pending',
  }),
  finishOtp: async ({ requestId }) => otpScripts.get(requestId)?.end as never,
  deliverWebhook: async ({ eventId, attempt }) => {
    const outcome = webhookScripts.get(eventId)?.[attempt - 1] ?? 'failed';
    return outcome === 'failed'
      ? { outcome, statusCode: 500, error: 'HTTP 500' }
      : outcome === 'delivered'
        ? { outcome, statusCode: 204 }
        : { outcome, reason: 'the endpoint is disabled' };
  },
  disableWebhookEndpoint: async () => true,
  closeOrphanCampaigns: answerZero,
  purgeExpiredIdempotencyKeys: answerZero,
  failUnsentOtpRequests: answerZero,
  deleteAbandonedOAuthClients: answerZero,
  deleteOldWebhookEvents: answerZero,
  deleteIdleSendSlots: answerZero,
  deleteStaleSubmissionLeases: answerZero,
  purgeExpiredOAuthRecords: answerZero,
  dropExpiredPersonalData: async () => ({ dropped: 0, more: false }),
  // A full batch, then a short one that ends the run.
  reconcileAwaitingReceipts: async () => {
    reconciledBatches++;
    return reconciledBatches === 1
      ? { examined: 100, settledByLookup: 90, givenUp: 4 }
      : { examined: 41, settledByLookup: 40, givenUp: 1 };
  },
};

/**
 * Scenarios whose timers run for days: recorded on Temporal's time-skipping test server
 * (test/support/time-skipping.ts), whose histories replay as the dev server's do.
 */
const TIME_SKIPPED = new Set(['webhook-exhausted']);

/** A scenario starts its run and returns its workflow id once the run is over. */
type Scenario = (client: Client) => Promise<string>;

async function finished(client: Client, workflowId: string): Promise<string> {
  const result = await client.workflow.getHandle(workflowId).result();
  process.stderr.write(`${workflowId}: ${JSON.stringify(result)}\n`);
  return workflowId;
}

function otpScenario(
  requestId: string,
  script: { submit: 'pending' | 'accepted' | 'failed'; reconcile: ('pending' | 'accepted')[] },
  end: string,
  expiresInMs: number,
): Scenario {
  return async (client) => {
    otpScripts.set(requestId, { ...script, end });
    const expiresAt = new Date(Date.now() + expiresInMs);
    const request = { workspaceId: WORKSPACE_ID, requestId, key: null, codeLength: 6, expiresAt };
    await startOtpWorkflow(client, { ...request, purpose: 'login' }, Date.now() + 20_000);
    return finished(client, otpWorkflowId(WORKSPACE_ID, null, requestId));
  };
}

function webhookScenario(
  eventId: string,
  outcomes: ('delivered' | 'failed' | 'skipped')[],
): Scenario {
  return async (client) => {
    webhookScripts.set(eventId, outcomes);
    const subject = `campaign-${eventId}`;
    const event = { workspaceId: WORKSPACE_ID, eventId, type: 'campaign.completed', subject };
    await startWebhookWorkflow(client, event, 7);
    return finished(client, webhookLaneWorkflowId(WORKSPACE_ID, subject, 7));
  };
}

/**
 * A campaign of `messages`, sent `sendInMs` from its start when given, and canceled (signalled,
 * as commands/messaging/cancel-campaign.ts does) `cancelAfterMs` after its start when given.
 */
function campaignScenario(
  campaignId: number,
  messages: number,
  {
    sendInMs,
    cancelAfterMs,
    holdsMs = [],
  }: { sendInMs?: number; cancelAfterMs?: number; holdsMs?: number[] } = {},
): Scenario {
  return async (client) => {
    campaignUnsettled.set(campaignId, messages);
    campaignHolds.set(campaignId, [...holdsMs]);
    const campaign = {
      workspaceId: WORKSPACE_ID,
      campaignId,
      workflowId: campaignWorkflowId(WORKSPACE_ID, `fixture-${campaignId}`, campaignId),
      reference: 'fixture',
      purpose: holdsMs.length > 0 ? 'marketing' : 'transactional',
      requestedRecipients: messages,
      messages,
      scheduledAt: sendInMs === undefined ? null : new Date(Date.now() + sendInMs),
    };
    if (!(await startCampaignWorkflow(client, campaign, Date.now() + 20_000)))
      throw new Error('the campaign run did not start');
    if (cancelAfterMs !== undefined) {
      await sleep(cancelAfterMs);
      await client.workflow.getHandle(campaign.workflowId).signal(CAMPAIGN_CANCELED_SIGNAL);
    }
    return finished(client, campaign.workflowId);
  };
}

// campaign-in-lanes.history.json (550 recipients in six chunks of 100, planned by an activity,
// completed by another) was recorded before the campaign-sized-chunks patch: it stands for the
// runs of that branch, which no code starts any more.
const scenarios: Record<string, Scenario> = {
  /** 1,250 recipients: five chunks of 250 in four lanes; the last chunk to settle completes it. */
  'campaign-sized-chunks': campaignScenario(102, 1_250),
  /** One recipient: one chunk, which completes the campaign. */
  'campaign-of-one': campaignScenario(103, 1),
  /** Sent 3 s after its start (send_at): a timer, then queued, then one chunk. */
  'campaign-scheduled': campaignScenario(104, 1, { sendInMs: 3_000 }),
  /** Scheduled a minute ahead, canceled 1 s in: the timer gives way to the signal. */
  'campaign-canceled-scheduled': campaignScenario(105, 10, {
    sendInMs: 60_000,
    cancelAfterMs: 1_000,
  }),
  /** 2,500 recipients in ten chunks, canceled 400 ms in: the lanes take no further chunk. */
  'campaign-canceled-sending': campaignScenario(106, 2_500, { cancelAfterMs: 400 }),
  /**
   * Quiet hours: the chunk's first run leaves messages waiting 2 s, its second 1 s (the windows of
   * recipients in two zones), its third sends the rest: two timers, three runs of one chunk.
   */
  'campaign-quiet-hours': campaignScenario(107, 3, { holdsMs: [2_000, 1_000] }),
  /** Held for a minute, canceled 1 s into the wait: the timer gives way to the signal. */
  'campaign-quiet-hours-canceled': campaignScenario(108, 3, {
    holdsMs: [60_000],
    cancelAfterMs: 1_000,
  }),
  /** Accepted at once, held until expiry, then verified. */
  'otp-accepted': otpScenario(
    'otp-accepted',
    { submit: 'accepted', reconcile: [] },
    'verified',
    2_000,
  ),
  /** Outcome uncertain: looked up twice (5 s apart) before accepted, then expired unverified. */
  'otp-reconciled': otpScenario(
    'otp-reconciled',
    { submit: 'pending', reconcile: ['pending', 'accepted'] },
    'expired',
    12_000,
  ),
  /** Refused by the provider: no hold. */
  'otp-failed': otpScenario('otp-failed', { submit: 'failed', reconcile: [] }, 'failed', 60_000),
  /** A 500, the first retry delay (5 s), then delivered. */
  'webhook-retried': webhookScenario('msg_fixture_retried', ['failed', 'delivered']),
  /** Ten failures over the whole schedule (three days, time-skipped), then the endpoint disabled. */
  'webhook-exhausted': webhookScenario('msg_fixture_exhausted', []),
  /** The endpoint was disabled before the first attempt. */
  'webhook-skipped': webhookScenario('msg_fixture_skipped', ['skipped']),
  /**
   * A lane (one message, one endpoint): message.sent gets a 500; the receipt's event comes while
   * it waits for its retry (5 s), and goes only after it is delivered.
   */
  'webhook-lane': async (client) => {
    const [sent, delivered] = ['msg_fixture_lane_sent', 'msg_fixture_lane_delivered'];
    webhookScripts.set(sent, ['failed', 'delivered']);
    webhookScripts.set(delivered, ['delivered']);
    const lane = { workspaceId: WORKSPACE_ID, subject: 'message-1-1' };
    await startWebhookWorkflow(client, { ...lane, eventId: sent, type: 'message.sent' }, 7);
    await sleep(1000);
    await startWebhookWorkflow(
      client,
      { ...lane, eventId: delivered, type: 'message.delivered' },
      7,
    );
    return finished(client, webhookLaneWorkflowId(WORKSPACE_ID, lane.subject, 7));
  },
  /** HELP's automatic answer to one inbound message, started as the api starts it: sent. */
  'help-reply': async (client) => {
    await startHelpReplyWorkflow(client, { workspaceId: WORKSPACE_ID, inboundId: 7 });
    return finished(client, helpReplyWorkflowId(WORKSPACE_ID, 7));
  },
  /** Today's daily run, started as the schedule starts it, with nothing to clean. */
  'maintenance-daily': async (client) => {
    const workflowId = 'herald-daily-maintenance';
    await client.workflow.start('maintenanceWorkflow', {
      workflowId,
      taskQueue: TASK_QUEUE,
      typedSearchAttributes: [{ key: searchAttributes.kind, value: 'cleanup' }],
    });
    return finished(client, workflowId);
  },
  /** A run of the receipt reconciliation, started as its schedule starts it: two batches. */
  'receipt-reconciliation': async (client) => {
    const workflowId = 'herald-receipt-reconciliation-fixture';
    await client.workflow.start('receiptReconciliationWorkflow', {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [{ lookupAfterSeconds: 600, giveUpAfterSeconds: 172_800 }],
      typedSearchAttributes: [{ key: searchAttributes.kind, value: 'receipts' }],
    });
    return finished(client, workflowId);
  },
};

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Runs the scenarios beside workers of Herald's task queues, and writes their histories. */
async function record(
  client: Client,
  workerConnection: NativeConnection,
  workflowBundle: WorkflowBundleWithSourceMap,
  chosen: { scenario: string; out: string }[],
): Promise<void> {
  const workers = await Promise.all(
    [TASK_QUEUE, OTP_TASK_QUEUE, WEBHOOK_TASK_QUEUE].map((taskQueue) =>
      Worker.create({ connection: workerConnection, taskQueue, workflowBundle, activities }),
    ),
  );
  const running = workers.map((worker) => worker.run());
  try {
    const { History } = proto.temporal.api.history.v1;
    await Promise.all(
      chosen.map(async ({ scenario, out }) => {
        const workflowId = await (scenarios[scenario] as Scenario)(client);
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        const object = History.toObject(History.fromObject(history), {
          longs: String,
          enums: String,
          bytes: String,
        });
        await writeFile(out, `${JSON.stringify(object, null, 2)}\n`);
        process.stderr.write(`wrote ${out}\n`);
      }),
    );
  } finally {
    for (const worker of workers) worker.shutdown();
    await Promise.all(running);
  }
}

async function main(argv: string[]): Promise<void> {
  const replace = argv.includes('--replace');
  const wanted = argv.filter((arg) => arg !== '--replace');
  const everything = wanted.includes('all');
  const named = (everything ? Object.keys(scenarios) : wanted).map((arg) => {
    const [scenario = '', name = scenario] = arg.split('=');
    if (!scenarios[scenario]) throw new Error(`unknown scenario ${scenario}`);
    return { scenario, out: `${FIXTURES}${name}.history.json` };
  });
  if (named.length === 0) {
    process.stdout.write(`scenarios: ${Object.keys(scenarios).join(', ')}\n`);
    return;
  }
  const chosen: typeof named = [];
  for (const entry of named) {
    if (replace || !(await exists(entry.out))) chosen.push(entry);
    else if (everything) process.stderr.write(`kept ${entry.out}\n`);
    else throw new Error(`${entry.out} exists (--replace to overwrite)`);
  }
  if (chosen.length === 0) return;

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
    logger: new DefaultLogger('WARN'),
  });
  const onDevServer = chosen.filter(({ scenario }) => !TIME_SKIPPED.has(scenario));
  const timeSkipped = chosen.filter(({ scenario }) => TIME_SKIPPED.has(scenario));
  if (onDevServer.length > 0) {
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
      const connection = await Connection.connect({ address: server.address });
      try {
        await record(new Client({ connection }), workerConnection, workflowBundle, onDevServer);
      } finally {
        await connection.close();
        await workerConnection.close();
      }
    } finally {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (timeSkipped.length > 0) {
    const { env, stop } = await startTimeSkippingEnvironment();
    try {
      await record(env.client, env.nativeConnection, workflowBundle, timeSkipped);
    } finally {
      await stop();
    }
  }
  // As Biome writes JSON, so that npm test's lint step accepts the fixtures as they are.
  const biome = fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url));
  await promisify(execFile)(biome, ['format', '--write', ...chosen.map(({ out }) => out)]);
}

await main(process.argv.slice(2));
