/**
 * The workflows' own logic, fast: each runs on Temporal's time-skipping test server (days of
 * timers pass in moments) against mocked activities that record every call, so the tests state
 * exactly which activities a run asks for, with which input, in which order. What the activities
 * do against Postgres and the providers is the real-stack suites' job (test/integration).
 */
import { activityInfo } from '@temporalio/activity';
import {
  WithStartWorkflowOperation,
  WorkflowFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { activityFailure } from '../../domain/errors.js';
import type { OtpSubmission } from '../../domain/otp.js';
import { WEBHOOK_RETRY_DELAYS_MS } from '../../domain/webhooks.js';
import type { campaignWorkflow } from '../../workflows/campaign.js';
import { searchAttributes } from '../../workflows/definitions.js';
import { type otpWorkflow, submissionUpdate } from '../../workflows/otp.js';
import type { receiptReconciliationWorkflow } from '../../workflows/receipt-reconciliation.js';
import type { webhookWorkflow } from '../../workflows/webhook.js';
import { startTimeSkippingEnvironment, type TimeSkipping } from '../support/time-skipping.js';

type Mocked = Partial<Activities>;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

let timeSkipping: TimeSkipping;
let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;
let runs = 0;

beforeAll(async () => {
  // These tests fail activities on purpose, and the test server is older than the SDK's core
  // expects: both would only be warnings here.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  [timeSkipping, workflowBundle] = await Promise.all([
    startTimeSkippingEnvironment(),
    bundleWorkflowCode({
      workflowsPath: new URL('../../workflows/index.ts', import.meta.url).pathname,
      logger: new DefaultLogger('WARN'),
    }),
  ]);
  env = timeSkipping.env;
}, 240_000);

afterAll(async () => {
  await timeSkipping?.stop();
});

/** Runs `body` beside a worker of its own task queue that has the mocked activities. */
async function withWorker<T>(
  activities: Mocked,
  body: (taskQueue: string, workflowId: string) => Promise<T>,
): Promise<T> {
  runs++;
  const taskQueue = `time-skipping-${runs}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle,
    activities,
  });
  return worker.runUntil(body(taskQueue, `run-${runs}`));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const toMs = (duration: proto.google.protobuf.IDuration | null | undefined) =>
  Number(duration?.seconds ?? 0) * 1000 + Math.round((duration?.nanos ?? 0) / 1e6);

/** The durable timers a run started, in milliseconds, in order. */
function timers(events: HistoryEvent[]): number[] {
  return events.flatMap((event) =>
    event.timerStartedEventAttributes
      ? [toMs(event.timerStartedEventAttributes.startToFireTimeout)]
      : [],
  );
}

async function finalStatus(workflowId: string) {
  return (await env.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(
    searchAttributes.status,
  );
}

describe('campaignWorkflow: chunks and lanes', { timeout: 60_000 }, () => {
  const campaignId = 42;
  const range = ({ fromSeq, toSeq }: { fromSeq: number; toSeq: number }) => `${fromSeq}-${toSeq}`;

  it('submits 1,250 recipients as five chunks of 250, never more than four at once; the chunk that settles the last message completes it', async () => {
    const calls: string[] = [];
    const running = new Map<string, () => void>();
    // Once the test is over, pass or fail, chunks stop waiting: a held chunk would keep the
    // worker's shutdown, and so the test, waiting until it timed out.
    let over = false;
    let unsettled = 1_250;
    const activities: Mocked = {
      planCampaign: async () => {
        calls.push('plan');
        return { total: 1_250 };
      },
      submitChunk: async (input) => {
        calls.push(`start ${range(input)}`);
        if (!over) await new Promise<void>((resolve) => running.set(range(input), resolve));
        running.delete(range(input));
        calls.push(`end ${range(input)}`);
        unsettled -= input.toSeq - input.fromSeq + 1;
        return { completed: unsettled === 0 };
      },
      completeCampaign: async () => {
        calls.push('complete');
      },
    };
    const release = (chunk: string) => (running.get(chunk) as () => void)();

    await withWorker(activities, async (taskQueue, workflowId) => {
      const handle = await env.client.workflow.start<typeof campaignWorkflow>('campaignWorkflow', {
        workflowId,
        taskQueue,
        args: [{ campaignId, total: 1_250 }],
      });
      try {
        await checkLanes(handle);
      } finally {
        over = true;
        for (const chunk of [...running.keys()]) release(chunk);
      }
    });

    async function checkLanes(handle: WorkflowHandle<typeof campaignWorkflow>) {
      await until(() => running.size === 4, 'four chunks in flight');
      // A fifth lane would have taken the next chunk at once.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(calls.sort()).toEqual([
        'start 1-250',
        'start 251-500',
        'start 501-750',
        'start 751-1000',
      ]);

      // A lane that finishes takes the next chunk; the others stay busy.
      release('501-750');
      await until(() => running.has('1001-1250'), 'the fifth chunk');
      expect([...running.keys()].sort()).toEqual(
        ['1-250', '251-500', '751-1000', '1001-1250'].sort(),
      );
      for (const chunk of [...running.keys()]) release(chunk);
      await handle.result();
      expect(calls.filter((call) => call.startsWith('end'))).toHaveLength(5);
      expect(calls).not.toContain('plan');
      expect(calls).not.toContain('complete');
      expect(await finalStatus(handle.workflowId)).toBe('completed');
    }
  });

  it.each([
    [0, []],
    [1, ['1-1']],
    [101, ['1-100', '101-101']],
    [399, ['1-100', '101-200', '201-300', '301-399']],
    [401, ['1-101', '102-202', '203-303', '304-401']],
    [1_000, ['1-250', '251-500', '501-750', '751-1000']],
    [1_001, ['1-250', '251-500', '501-750', '751-1000', '1001-1001']],
  ])('cuts %i recipients into chunks %j', async (total, chunks) => {
    const submitted: string[] = [];
    await withWorker(
      {
        submitChunk: async (input) => {
          submitted.push(range(input));
          return { completed: submitted.length === chunks.length };
        },
        completeCampaign: async () => {},
      },
      (taskQueue, workflowId) =>
        env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue,
          args: [{ campaignId, total }],
        }),
    );
    expect(submitted.sort()).toEqual([...chunks].sort());
  });

  it.each([
    ['no chunk completed it', { completed: false }],
    ['a worker of an older build answered nothing', undefined],
  ])('completes the campaign itself once when %s', async (_, answer) => {
    const calls: string[] = [];
    await withWorker(
      {
        submitChunk: async (input) => {
          calls.push(range(input));
          return answer as { completed: boolean };
        },
        completeCampaign: async (input) => {
          calls.push(`complete ${input.campaignId}`);
        },
      },
      (taskQueue, workflowId) =>
        env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue,
          args: [{ campaignId, total: 250 }],
        }),
    );
    expect(calls.slice(0, -1).sort()).toEqual(['1-100', '101-200', '201-250']);
    expect(calls.at(-1)).toBe(`complete ${campaignId}`);
  });

  /** Each chunk submitted, and whether as the local first try. */
  async function chunksOfRun(total: number, firstTry: Mocked['submitChunk']) {
    const chunks: { range: string; local: boolean }[] = [];
    const events = await withWorker(
      {
        submitChunk: async (input) => {
          const local = activityInfo().isLocal;
          chunks.push({ range: range(input), local });
          if (local && firstTry) return firstTry(input);
          return { completed: true };
        },
        completeCampaign: async () => {},
      },
      async (taskQueue, workflowId) => {
        await env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue,
          args: [{ campaignId, total }],
        });
        expect(await finalStatus(workflowId)).toBe('completed');
        return (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      },
    );
    const activityTasks = events.filter((event) => event.activityTaskScheduledEventAttributes);
    return { chunks, activityTasks: activityTasks.length };
  }

  it('sends a campaign of at most ten as a local activity in its first workflow task: no activity task', async () => {
    expect(await chunksOfRun(10, undefined)).toEqual({
      chunks: [{ range: '1-10', local: true }],
      activityTasks: 0,
    });
  });

  it.each([
    ['failed', async () => Promise.reject(new Error('Postgres went away'))],
    [
      'left messages for quiet hours',
      async () => ({ completed: false, heldUntil: new Date(0).toISOString() }),
    ],
  ])(
    'leaves to the chunk activity what a local first try that %s did not finish',
    async (_, firstTry) => {
      expect(await chunksOfRun(5, firstTry)).toEqual({
        chunks: [
          { range: '1-5', local: true },
          { range: '1-5', local: false },
        ],
        activityTasks: 1,
      });
    },
  );

  it('sends a campaign of eleven through the chunk activity only', async () => {
    expect(await chunksOfRun(11, undefined)).toEqual({
      chunks: [{ range: '1-11', local: false }],
      activityTasks: 1,
    });
  });

  it('asks for the total of a run dispatched without one', async () => {
    const calls: string[] = [];
    await withWorker(
      {
        planCampaign: async (input) => {
          calls.push(`plan ${input.campaignId}`);
          return { total: 3 };
        },
        submitChunk: async (input) => {
          calls.push(range(input));
          return { completed: true };
        },
      },
      (taskQueue, workflowId) =>
        env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue,
          args: [{ campaignId }],
        }),
    );
    expect(calls).toEqual([`plan ${campaignId}`, '1-3']);
  });

  it('retries a chunk whose lease was lost, and completes', async () => {
    const submitted: string[] = [];
    await withWorker(
      {
        submitChunk: async (input) => {
          submitted.push(range(input));
          if (range(input) === '101-150' && submitted.length <= 2)
            throw activityFailure('SubmissionLeaseLost', 'a newer attempt took the work over');
          return { completed: false };
        },
        completeCampaign: async () => {},
      },
      async (taskQueue, workflowId) => {
        await env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue,
          args: [{ campaignId, total: 150 }],
        });
        expect(await finalStatus(workflowId)).toBe('completed');
      },
    );
    expect(submitted.sort()).toEqual(['1-100', '101-150', '101-150']);
  });

  it('never retries a failure the catalogue calls permanent, even one thrown as retryable', async () => {
    let attempts = 0;
    let completed = 0;
    const failure = await withWorker(
      {
        submitChunk: async () => {
          attempts++;
          throw ApplicationFailure.retryable('campaign 42 not found', 'CampaignNotFound');
        },
        completeCampaign: async () => {
          completed++;
        },
      },
      (taskQueue, workflowId) =>
        env.client.workflow
          .execute<typeof campaignWorkflow>('campaignWorkflow', {
            workflowId,
            taskQueue,
            args: [{ campaignId, total: 50 }],
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          ),
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const activity = (failure as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    expect((activity as ActivityFailure).activityType).toBe('submitChunk');
    expect(((activity as ActivityFailure).cause as ApplicationFailure).type).toBe(
      'CampaignNotFound',
    );
    expect(attempts).toBe(1);
    expect(completed).toBe(0);
  });
});

describe('campaignWorkflow: quiet hours', { timeout: 60_000 }, () => {
  const campaignId = 43;
  const HOLD_MS = 14 * 3_600_000;
  /**
   * HOLD_MS from now by the test server's clock, which earlier tests have skipped ahead of the
   * real one: the workflow's timer reads that clock.
   */
  const heldUntil = () =>
    new Date(activityInfo().currentAttemptScheduledTimestampMs + HOLD_MS).toISOString();

  it('sleeps on a durable timer until the held messages may go, then runs the chunk again', async () => {
    const inputs: unknown[] = [];
    await withWorker(
      {
        submitChunk: async (input) => {
          inputs.push(input);
          return inputs.length === 1
            ? { completed: false, heldUntil: heldUntil() }
            : { completed: true };
        },
      },
      async (taskQueue, workflowId) => {
        await env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue,
          args: [{ campaignId, total: 30 }],
        });
        const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
        const [timer] = timers(events ?? []);
        expect(timer).toBeGreaterThan(HOLD_MS - 60_000);
        expect(timer).toBeLessThanOrEqual(HOLD_MS);
        expect(await finalStatus(workflowId)).toBe('completed');
      },
    );
    const chunk = { campaignId, fromSeq: 1, toSeq: 30, quietHours: true };
    expect(inputs).toEqual([chunk, chunk]);
  });

  it('wakes on a cancel and ends: no further run of the chunk', async () => {
    const calls: string[] = [];
    await withWorker(
      {
        submitChunk: async () => {
          calls.push('chunk');
          return { completed: false, heldUntil: heldUntil() };
        },
        completeCampaign: async () => {
          calls.push('complete');
        },
      },
      async (taskQueue, workflowId) => {
        const handle = await env.client.workflow.start<typeof campaignWorkflow>(
          'campaignWorkflow',
          { workflowId, taskQueue, args: [{ campaignId, total: 30 }] },
        );
        await until(() => calls.length === 1, 'the first run of the chunk');
        // Time stands still while a signal is awaited: the run is asleep on its timer.
        await handle.signal('campaignCanceled');
        await handle.result();
        expect(await finalStatus(workflowId)).toBe('canceled');
      },
    );
    expect(calls).toEqual(['chunk', 'complete']);
  });
});

describe('otpWorkflow: reconcile loop and expiry', { timeout: 60_000 }, () => {
  const requestId = 'otp-1';
  const MINUTE = 60_000;

  /** Starts the run as the api does (Update-with-Start) and waits for it to end. */
  async function runOtp(
    activities: Mocked,
    expiresInMs: number,
  ): Promise<{ submission: OtpSubmission; result: string; events: HistoryEvent[]; ms: number }> {
    return withWorker(activities, async (taskQueue, workflowId) => {
      const expiresAt = (await env.currentTimeMs()) + expiresInMs;
      const start = new WithStartWorkflowOperation<typeof otpWorkflow>('otpWorkflow', {
        workflowId,
        taskQueue,
        args: [{ requestId, codeLength: 6, expiresAt }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      const submission = await env.client.workflow.executeUpdateWithStart(submissionUpdate, {
        startWorkflowOperation: start,
      });
      const handle = await start.workflowHandle();
      const result = await handle.result();
      const { events } = await handle.fetchHistory();
      const described = await handle.describe();
      const ms = (described.closeTime?.getTime() ?? 0) - described.startTime.getTime();
      expect(described.typedSearchAttributes.get(searchAttributes.status)).toBe(result);
      return { submission, result, events: events ?? [], ms };
    });
  }

  function otpActivities(
    submit: OtpSubmission['status'],
    reconciled: OtpSubmission['status'][],
    outcome: string,
  ) {
    const calls: unknown[][] = [];
    const activities: Mocked = {
      submitOtp: async (input) => {
        calls.push(['submitOtp', input]);
        return { status: submit };
      },
      reconcileOtp: async (input) => {
        calls.push(['reconcileOtp', input]);
        return { status: reconciled.shift() ?? 'pending' };
      },
      finishOtp: async (input) => {
        calls.push(['finishOtp', input]);
        return outcome as never;
      },
    };
    return { calls, activities };
  }

  it('answers accepted at once, holds the request until its expiry, then finishes it', async () => {
    const { calls, activities } = otpActivities('accepted', [], 'verified');
    const run = await runOtp(activities, 10 * MINUTE);
    expect(run.submission).toEqual({ status: 'accepted' });
    expect(run.result).toBe('verified');
    expect(calls).toEqual([
      ['submitOtp', { requestId, codeLength: 6 }],
      ['finishOtp', { requestId }],
    ]);
    expect(timers(run.events)).toHaveLength(1);
    expect(run.ms).toBeGreaterThanOrEqual(10 * MINUTE - 1_000);
    expect(run.ms).toBeLessThan(11 * MINUTE);
  });

  it('looks an uncertain submission up every 5 s until accepted, then holds until expiry', async () => {
    const { calls, activities } = otpActivities('pending', ['pending', 'accepted'], 'expired');
    const run = await runOtp(activities, 10 * MINUTE);
    // The send request is answered as soon as the first outcome is known: still uncertain.
    expect(run.submission).toEqual({ status: 'pending' });
    expect(run.result).toBe('expired');
    expect(calls).toEqual([
      ['submitOtp', { requestId, codeLength: 6 }],
      ['reconcileOtp', { requestId }],
      ['reconcileOtp', { requestId }],
      ['finishOtp', { requestId }],
    ]);
    const [first, second, hold, ...more] = timers(run.events);
    expect([first, second, more]).toEqual([5_000, 5_000, []]);
    expect(hold).toBeGreaterThan(10 * MINUTE - 11_000);
    expect(hold).toBeLessThanOrEqual(10 * MINUTE - 10_000);
  });

  it('stops looking up at expiry when the outcome never became known, and finishes at once', async () => {
    const { calls, activities } = otpActivities('pending', [], 'failed');
    const run = await runOtp(activities, 12_000);
    expect(run.submission).toEqual({ status: 'pending' });
    expect(run.result).toBe('failed');
    // Looked up at 5, 10 and 15 s; the code expired at 12 s, so no fourth look and no hold.
    expect(calls).toEqual([
      ['submitOtp', { requestId, codeLength: 6 }],
      ['reconcileOtp', { requestId }],
      ['reconcileOtp', { requestId }],
      ['reconcileOtp', { requestId }],
      ['finishOtp', { requestId }],
    ]);
    expect(timers(run.events)).toEqual([5_000, 5_000, 5_000]);
  });

  it('finishes a refused submission at once, without a hold', async () => {
    const { calls, activities } = otpActivities('failed', [], 'failed');
    const run = await runOtp(activities, 10 * MINUTE);
    expect(run.submission).toEqual({ status: 'failed' });
    expect(run.result).toBe('failed');
    expect(calls).toEqual([
      ['submitOtp', { requestId, codeLength: 6 }],
      ['finishOtp', { requestId }],
    ]);
    expect(timers(run.events)).toEqual([]);
    expect(run.ms).toBeLessThan(MINUTE);
  });
});

describe('webhookWorkflow: the retry schedule', { timeout: 60_000 }, () => {
  const input = { workspaceId: 3, eventId: 'msg_schedule', endpointId: 9 };
  type Outcome = Awaited<ReturnType<Activities['deliverWebhook']>>;
  const failed: Outcome = { outcome: 'failed', statusCode: 500, error: 'HTTP 500' };

  async function deliver(outcomes: Outcome[]) {
    const attempts: unknown[] = [];
    const disabled: unknown[] = [];
    const activities: Mocked = {
      deliverWebhook: async (attempt) => {
        attempts.push(attempt);
        return outcomes[attempts.length - 1] ?? failed;
      },
      disableWebhookEndpoint: async (reason) => {
        disabled.push(reason);
        return true;
      },
    };
    return withWorker(activities, async (taskQueue, workflowId) => {
      const handle = await env.client.workflow.start<typeof webhookWorkflow>('webhookWorkflow', {
        workflowId,
        taskQueue,
        args: [input],
      });
      const result = await handle.result();
      const { events } = await handle.fetchHistory();
      expect(await finalStatus(workflowId)).toBe(result);
      return { result, attempts, disabled, timers: timers(events ?? []) };
    });
  }

  const attempt = (n: number) => ({
    eventId: input.eventId,
    endpointId: input.endpointId,
    attempt: n,
    retryInMs: WEBHOOK_RETRY_DELAYS_MS[n - 1] ?? null,
  });

  it('tries ten times over the whole schedule, then disables the endpoint', async () => {
    const run = await deliver([]);
    expect(run.result).toBe('failed');
    expect(run.attempts).toEqual(Array.from({ length: 10 }, (_, index) => attempt(index + 1)));
    expect(run.timers).toEqual([...WEBHOOK_RETRY_DELAYS_MS]);
    expect(run.disabled).toEqual([
      {
        endpointId: 9,
        reason:
          'Disabled after 10 failed attempts to deliver msg_schedule ' +
          '(retry schedule of 3 d 3 h 35 min 5 s spent); last error: HTTP 500',
      },
    ]);
  });

  it('stops at the first 2xx, after waiting out each delay before it', async () => {
    const run = await deliver([failed, failed, { outcome: 'delivered', statusCode: 204 }]);
    expect(run.result).toBe('delivered');
    expect(run.attempts).toEqual([attempt(1), attempt(2), attempt(3)]);
    expect(run.timers).toEqual(WEBHOOK_RETRY_DELAYS_MS.slice(0, 2));
    expect(run.disabled).toEqual([]);
  });

  it('ends without disabling when the endpoint went away between attempts', async () => {
    const run = await deliver([failed, { outcome: 'skipped', reason: 'the endpoint is disabled' }]);
    expect(run.result).toBe('skipped');
    expect(run.attempts).toEqual([attempt(1), attempt(2)]);
    expect(run.timers).toEqual(WEBHOOK_RETRY_DELAYS_MS.slice(0, 1));
    expect(run.disabled).toEqual([]);
  });
});

describe('receiptReconciliationWorkflow: batches of overdue receipts', { timeout: 60_000 }, () => {
  const windows = { lookupAfterSeconds: 600, giveUpAfterSeconds: 172_800 };
  type Batch = Awaited<ReturnType<Activities['reconcileAwaitingReceipts']>>;
  const full: Batch = { examined: 100, settledByLookup: 60, givenUp: 10 };

  async function reconcile(batches: Batch[]) {
    const asked: unknown[] = [];
    const activities: Mocked = {
      reconcileAwaitingReceipts: async (input) => {
        asked.push(input);
        return batches[asked.length - 1] ?? full;
      },
    };
    return withWorker(activities, async (taskQueue, workflowId) => {
      const result = await env.client.workflow.execute<typeof receiptReconciliationWorkflow>(
        'receiptReconciliationWorkflow',
        { workflowId, taskQueue, args: [windows] },
      );
      return { result, asked, status: await finalStatus(workflowId) };
    });
  }

  it('asks for batches of 100 with its windows until one comes back short, and totals them', async () => {
    const run = await reconcile([full, full, { examined: 37, settledByLookup: 30, givenUp: 7 }]);
    expect(run.asked).toEqual(Array(3).fill({ ...windows, batchSize: 100 }));
    expect(run.result).toEqual({ examined: 237, settledByLookup: 150, givenUp: 27 });
    expect(run.status).toBe('completed');
  });

  it('ends after 200 full batches, leaving the rest to the next run', async () => {
    const run = await reconcile([]);
    expect(run.asked).toHaveLength(200);
    expect(run.result).toEqual({ examined: 20_000, settledByLookup: 12_000, givenUp: 2_000 });
  });
});
