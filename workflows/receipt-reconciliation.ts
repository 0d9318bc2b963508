import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ReceiptWindows, ReconciledReceipts } from '../activities/receipt-reconciliation.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

/** Messages one activity asks about: at 8 lookups at once, well inside its timeout. */
const BATCH_SIZE = 100;
/**
 * A run asks about at most this many batches (20,000 messages, 600 history events); the rest wait
 * for the next run, minutes later. Bounds both the history and the load on providers' APIs.
 */
const MOST_BATCHES_PER_RUN = 200;

/** 100 lookups, 8 at a time, each bounded by its adapter's 10 s timeout: 130 s at the very worst. */
const ONE_BATCH_TIMEOUT = '3 minutes';
/** Then the run fails; the next, minutes later, does the same work. */
const ATTEMPTS_BEFORE_LEAVING_IT_TO_THE_NEXT_RUN = 5;

const { reconcileAwaitingReceipts } = proxyActivities<Activities>({
  startToCloseTimeout: ONE_BATCH_TIMEOUT,
  retry: retryUnlessPermanent({ maximumAttempts: ATTEMPTS_BEFORE_LEAVING_IT_TO_THE_NEXT_RUN }),
});

export type ReceiptReconciliationInput = ReceiptWindows;

/**
 * Messages still awaiting their delivery receipt past the lookup window, in batches until one comes
 * back short: each is looked up at its provider, or given up as `unknown` past the give-up window
 * (activities/receipt-reconciliation.ts). Started every few minutes by its schedule
 * (temporal/schedules.ts), with the windows configured there.
 */
export async function receiptReconciliationWorkflow(
  input: ReceiptReconciliationInput,
): Promise<ReconciledReceipts> {
  const totals: ReconciledReceipts = { examined: 0, settledByLookup: 0, givenUp: 0 };
  for (let batch = 0; batch < MOST_BATCHES_PER_RUN; batch++) {
    const done = await reconcileAwaitingReceipts({ ...input, batchSize: BATCH_SIZE });
    totals.examined += done.examined;
    totals.settledByLookup += done.settledByLookup;
    totals.givenUp += done.givenUp;
    if (done.examined < BATCH_SIZE) break;
  }
  setRunStatus('completed');
  return totals;
}
