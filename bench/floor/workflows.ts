/**
 * Temporal's own floor for the benchmarks: an empty workflow, and one whose update runs a no-op
 * local activity and returns, which is the least an OTP send through Update-with-Start can cost.
 */
import { condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type * as activities from './activities.js';

export const floorUpdate = defineUpdate<string>('floor');

const { noop } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '10 seconds' });

/** Started and left to the server's retention: the bare cost of a start. */
export async function emptyWorkflow(): Promise<void> {}

/** Answers one update after a local activity, then completes. */
export async function updatedWorkflow(): Promise<void> {
  let answered = false;
  setHandler(floorUpdate, async () => {
    const result = await noop();
    answered = true;
    return result;
  });
  await condition(() => answered);
}
