import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleOptions,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import {
  MAINTENANCE_SCHEDULE_ID,
  RECEIPT_RECONCILIATION_SCHEDULE_ID,
  searchAttributes,
  TASK_QUEUE,
} from '../workflows/definitions.js';
import type { maintenanceWorkflow, receiptReconciliationWorkflow } from '../workflows/index.js';
import type { ReceiptReconciliationInput } from '../workflows/receipt-reconciliation.js';

/**
 * A run takes seconds to minutes; one still going after this is stuck, and is ended so that the
 * next day's run (skipped while one overlaps) can start.
 */
const STUCK_RUN_ENDED_AFTER = '1 hour';

/** Creates a schedule, or brings an existing one up to date (the worker's settings win). */
async function ensureSchedule(
  client: Client,
  scheduleId: string,
  schedule: Omit<ScheduleOptions, 'scheduleId'>,
): Promise<void> {
  try {
    await client.schedule.create({ scheduleId, ...schedule });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule
      .getHandle(scheduleId)
      .update((previous) => ({ ...previous, ...schedule }));
  }
}

/** How often messages awaiting their receipt are looked at. */
const RECEIPT_RECONCILIATION_EVERY = '5 minutes';
/** A run asks about at most 20,000 messages, minutes of work; one still going after this is stuck. */
const STUCK_RECONCILIATION_ENDED_AFTER = '30 minutes';

/**
 * Creates the schedule that reconciles messages whose delivery receipt is overdue
 * (workflows/receipt-reconciliation.ts) with these windows, or brings it up to date.
 */
export async function ensureReceiptReconciliationSchedule(
  client: Client,
  windows: ReceiptReconciliationInput,
): Promise<void> {
  await ensureSchedule(client, RECEIPT_RECONCILIATION_SCHEDULE_ID, {
    spec: { intervals: [{ every: RECEIPT_RECONCILIATION_EVERY }] },
    action: {
      type: 'startWorkflow',
      workflowType:
        'receiptReconciliationWorkflow' satisfies typeof receiptReconciliationWorkflow.name,
      args: [windows],
      taskQueue: TASK_QUEUE,
      workflowExecutionTimeout: STUCK_RECONCILIATION_ENDED_AFTER,
      typedSearchAttributes: [{ key: searchAttributes.kind, value: 'receipts' }],
    },
    // A missed run is not made up: the next does the same work.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  });
}

/** Creates the daily maintenance schedule, or brings an existing one up to date. */
export async function ensureMaintenanceSchedule(client: Client): Promise<void> {
  await ensureSchedule(client, MAINTENANCE_SCHEDULE_ID, {
    spec: { calendars: [{ hour: 3, minute: 17, comment: 'daily at 03:17 UTC' }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'maintenanceWorkflow' satisfies typeof maintenanceWorkflow.name,
      taskQueue: TASK_QUEUE,
      workflowExecutionTimeout: STUCK_RUN_ENDED_AFTER,
      typedSearchAttributes: [{ key: searchAttributes.kind, value: 'cleanup' }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  });
}
