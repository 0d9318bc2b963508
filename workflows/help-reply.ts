import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { retryUnlessPermanent } from './retry-policies.js';
import { setRunStatus } from './run-status.js';

export interface HelpReplyWorkflowInput {
  /** The inbound_messages row whose HELP is answered. */
  inboundId: number;
}

// One submission and a few queries. A retry never resubmits (the claim is taken once); it looks
// the outcome up instead, so retrying costs nothing.
const { sendHelpReply } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: retryUnlessPermanent({
    initialInterval: '1 second',
    maximumInterval: '1 minute',
    maximumAttempts: 20,
  }),
});

/** The workspace's help text, sent once to whoever replied HELP (docs/providers.md "Replies"). */
export async function helpReplyWorkflow({ inboundId }: HelpReplyWorkflowInput): Promise<string> {
  const status = await sendHelpReply({ inboundId });
  setRunStatus(status);
  return status;
}
