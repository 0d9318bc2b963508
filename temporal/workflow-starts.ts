import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { campaignStarts } from '../telemetry/metrics.js';
import type { campaignWorkflow } from '../workflows/campaign.js';
import {
  helpReplyWorkflowId,
  OTP_SUBMISSION_UPDATE,
  OTP_TASK_QUEUE,
  otpWorkflowId,
  searchAttributes,
  TASK_QUEUE,
  WEBHOOK_EVENT_SIGNAL,
  WEBHOOK_TASK_QUEUE,
  type WebhookEventSignal,
  type WorkflowKind,
  webhookLaneWorkflowId,
  workspacePriority,
} from '../workflows/definitions.js';
import type { helpReplyWorkflow } from '../workflows/help-reply.js';
import type { otpWorkflow } from '../workflows/otp.js';
import type { webhookWorkflow } from '../workflows/webhook.js';
import { startsEagerly } from './client.js';
import { withinDeadline } from './deadline.js';

/**
 * Every workflow start Herald makes. A run is found again by its id (workflows/definitions.ts),
 * and a finished run is never started again (REJECT_DUPLICATE): that would send its messages
 * a second time. Webhook lanes are the exception (startWebhookWorkflow).
 */

/** What an operator sees of a run in the Temporal UI, and can filter on. */
function labels(run: {
  workspaceId: number;
  kind: WorkflowKind;
  status: string;
  campaignId?: number;
  memo: Record<string, unknown>;
  summary: string;
}) {
  const typedSearchAttributes: SearchAttributePair[] = [
    { key: searchAttributes.workspaceId, value: String(run.workspaceId) },
    { key: searchAttributes.kind, value: run.kind },
    { key: searchAttributes.status, value: run.status },
  ];
  if (run.campaignId !== undefined) {
    typedSearchAttributes.push({ key: searchAttributes.campaignId, value: run.campaignId });
  }
  return { typedSearchAttributes, memo: run.memo, staticSummary: run.summary };
}

/** Whether a start failed only because the run already exists, which is success here. */
const alreadyStarted = (error: unknown) => error instanceof WorkflowExecutionAlreadyStartedError;

/**
 * Starts (or finds) a campaign's run. True once Temporal confirmed it; false when it could not
 * confirm by `confirmBy` (epoch ms), and then the run may or may not exist.
 */
export async function startCampaignWorkflow(
  temporal: Client,
  campaign: {
    workspaceId: number;
    campaignId: number;
    workflowId: string;
    reference: string | null;
    purpose: string;
    requestedRecipients: number;
    /** Messages saved, which the run submits. */
    messages: number;
    /** When to send them; null: at once. */
    scheduledAt: Date | null;
  },
  confirmBy: number,
): Promise<boolean> {
  const { workspaceId, campaignId } = campaign;
  try {
    const run = await withinDeadline(temporal, confirmBy, () =>
      temporal.workflow.start<typeof campaignWorkflow>('campaignWorkflow', {
        workflowId: campaign.workflowId,
        taskQueue: TASK_QUEUE,
        priority: workspacePriority(workspaceId),
        args: [
          {
            campaignId,
            total: campaign.messages,
            ...(campaign.scheduledAt ? { sendAt: campaign.scheduledAt.toISOString() } : {}),
          },
        ],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // Its first workflow task comes back in the start's answer, to the worker beside us.
        requestEagerStart: startsEagerly(temporal),
        ...labels({
          workspaceId,
          kind: 'campaign',
          status: campaign.scheduledAt ? 'scheduled' : 'queued',
          campaignId,
          memo: {
            reference: campaign.reference,
            purpose: campaign.purpose,
            recipients: campaign.requestedRecipients,
          },
          summary: `Campaign ${campaignId}: ${campaign.requestedRecipients} recipients, ${campaign.purpose}`,
        }),
      }),
    );
    campaignStarts.inc({ eager: String(run.eagerlyStarted) });
    return true;
  } catch (error) {
    return alreadyStarted(error);
  }
}

/**
 * Starts (or finds) an OTP request's run and waits, until `answerBy` (epoch ms) at the latest,
 * for its submission to be decided. Never throws: when Temporal is slow or unreachable, or the
 * run is already over, the database has the outcome.
 */
export async function startOtpWorkflow(
  temporal: Client,
  request: {
    workspaceId: number;
    requestId: string;
    key: string | null;
    codeLength: number;
    expiresAt: Date;
    purpose: string;
  },
  answerBy: number,
): Promise<void> {
  const { workspaceId, requestId, purpose } = request;
  const start = new WithStartWorkflowOperation<typeof otpWorkflow>('otpWorkflow', {
    workflowId: otpWorkflowId(workspaceId, request.key, requestId),
    taskQueue: OTP_TASK_QUEUE,
    args: [{ requestId, codeLength: request.codeLength, expiresAt: request.expiresAt.getTime() }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    ...labels({
      workspaceId,
      kind: 'otp',
      status: 'pending',
      memo: { purpose },
      summary: `OTP ${requestId} for ${purpose}`,
    }),
  });
  try {
    await withinDeadline(temporal, answerBy, () =>
      temporal.workflow.executeUpdateWithStart(OTP_SUBMISSION_UPDATE, {
        startWorkflowOperation: start,
      }),
    );
  } catch {
    // Read from the database by the caller.
  }
}

/**
 * Hands one event to the delivery run of its lane (its subject and one endpoint), starting the
 * run when none is open. Unlike the other starts, a lane whose run has ended starts a new one for
 * its next event; an event handed over twice (a dispatcher that died before marking it) is
 * dropped by the open run, or found already delivered by the activity.
 */
export async function startWebhookWorkflow(
  temporal: Client,
  event: { workspaceId: number; eventId: string; type: string; subject: string },
  endpointId: number,
): Promise<void> {
  const { workspaceId, eventId, subject } = event;
  await temporal.workflow.signalWithStart<typeof webhookWorkflow, [WebhookEventSignal]>(
    'webhookWorkflow',
    {
      workflowId: webhookLaneWorkflowId(workspaceId, subject, endpointId),
      taskQueue: WEBHOOK_TASK_QUEUE,
      args: [{ workspaceId, eventId, endpointId }],
      signal: WEBHOOK_EVENT_SIGNAL,
      signalArgs: [{ eventId }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      ...labels({
        workspaceId,
        kind: 'webhook',
        status: 'pending',
        memo: { subject, endpoint: endpointId },
        summary: `Webhook events of ${subject} to endpoint ${endpointId}`,
      }),
    },
  );
}

/**
 * Starts HELP's automatic answer to one inbound message, or finds it started: resolves once
 * Temporal confirmed the run exists (never a second one: the reply may be delivered again).
 */
export async function startHelpReplyWorkflow(
  temporal: Client,
  reply: { workspaceId: number; inboundId: number },
): Promise<void> {
  const { workspaceId, inboundId } = reply;
  try {
    await temporal.workflow.start<typeof helpReplyWorkflow>('helpReplyWorkflow', {
      workflowId: helpReplyWorkflowId(workspaceId, inboundId),
      taskQueue: TASK_QUEUE,
      args: [{ inboundId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: workspacePriority(workspaceId),
      ...labels({
        workspaceId,
        kind: 'reply',
        status: 'pending',
        memo: { inbound: inboundId },
        summary: `HELP answer to inbound message ${inboundId}`,
      }),
    });
  } catch (error) {
    if (!alreadyStarted(error)) throw error;
  }
}
