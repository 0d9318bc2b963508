import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { MAINTENANCE_SCHEDULE_ID, searchAttributes, TASK_QUEUE } from '../workflows/definitions.js';
import type { maintenanceWorkflow } from '../workflows/index.js';

/**
 * A run takes seconds to minutes; one still going after this is stuck, and is ended so that the
 * next day's run (skipped while one overlaps) can start.
 */
const STUCK_RUN_ENDED_AFTER = '1 hour';

/** Creates the daily maintenance schedule, or brings an existing one up to date. */
export async function ensureMaintenanceSchedule(client: Client): Promise<void> {
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'maintenanceWorkflow' satisfies typeof maintenanceWorkflow.name,
    taskQueue: TASK_QUEUE,
    workflowExecutionTimeout: STUCK_RUN_ENDED_AFTER,
    typedSearchAttributes: [{ key: searchAttributes.kind, value: 'cleanup' }],
  };
  const spec = { calendars: [{ hour: 3, minute: 17, comment: 'daily at 03:17 UTC' }] };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' };
  try {
    await client.schedule.create({ scheduleId: MAINTENANCE_SCHEDULE_ID, spec, action, policies });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule
      .getHandle(MAINTENANCE_SCHEDULE_ID)
      .update((previous) => ({ ...previous, spec, action, policies }));
  }
}
