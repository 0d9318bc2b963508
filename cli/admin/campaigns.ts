/**
 * Named campaigns an operator starts: `campaign create` is the use-case of
 * commands/messaging/named-campaigns.ts (the console's Create campaign form runs the same), dispatched here
 * by a Temporal connection made for the command; `campaign resume` dispatches one left paused;
 * `campaign cancel` cancels one.
 */

import { readFile } from 'node:fs/promises';
import type { Actor } from '../../commands/actor.js';
import {
  BATCH_LIST_LIMIT,
  type BatchSource,
  listRecentWorkspaceBatches,
  sourceOf,
} from '../../commands/messaging/batch-listing.js';
import { findWorkspace } from '../../commands/team/workspaces.js';
import { publicUrlOf, temporalAddressOf } from '../../config/env.js';
import { findCampaignOrigin } from '../../db/campaigns.js';
import { findSupersedingCampaign } from '../../db/orphan-campaigns.js';
import type { Workspace } from '../../db/workspaces.js';
import { type AdminContext, operatorActor } from '../context.js';
import { listing, tableTime, UsageError } from '../output.js';
import { findRunningStack, stackFileOf } from '../running-stack.js';
import {
  type CommandResult,
  idOption,
  type Options,
  optional,
  required,
  run,
  text,
  wholeNumber,
} from './options.js';
import {
  type AdminCommand,
  oneOf,
  optional as optionalOption,
  required as requiredOption,
} from './table.js';

const workspaceBySlug = (context: AdminContext, slug: string) => run(findWorkspace(context, slug));

/**
 * The Temporal a campaign is dispatched on, and what named it: TEMPORAL_ADDRESS; else the
 * `herald start` running on HERALD_DATA_DIR (its stack.json); else the local dev server's
 * default address (TEMPORAL_DEV_PORT).
 */
async function temporalOf(context: AdminContext) {
  const { env } = context;
  if (env.TEMPORAL_ADDRESS)
    return {
      address: env.TEMPORAL_ADDRESS,
      namespace: env.TEMPORAL_NAMESPACE,
      from: 'env' as const,
    };
  const running = await findRunningStack(env.HERALD_DATA_DIR);
  if (running)
    return {
      address: running.temporalAddress,
      namespace: running.temporalNamespace,
      from: 'stack' as const,
    };
  return {
    address: temporalAddressOf(env),
    namespace: env.TEMPORAL_NAMESPACE,
    from: 'default' as const,
  };
}

/** The base of a campaign's opt-out links: PUBLIC_URL, else the running `herald start`'s. */
async function publicUrlFor(context: AdminContext): Promise<string> {
  if (context.env.PUBLIC_URL) return publicUrlOf(context.env);
  return (
    (await findRunningStack(context.env.HERALD_DATA_DIR))?.publicUrl ?? publicUrlOf(context.env)
  );
}

/** A client of the Temporal of `temporalOf`, or null when it cannot be reached. */
async function connectTemporal(context: AdminContext) {
  // The Temporal client loads only here: the other admin commands start without it.
  const { DISPATCH_CONFIRM_MS } = await import('../../commands/messaging/dispatch-campaign.js');
  const { connectTemporalClient } = await import('../../temporal/client.js');
  const temporal = await temporalOf(context);
  try {
    const client = await connectTemporalClient(temporal.address, temporal.namespace, {
      connectTimeoutMs: DISPATCH_CONFIRM_MS,
    });
    return { temporal, client };
  } catch {
    return { temporal, client: null };
  }
}

/** Why the dispatch was not confirmed, and what would let it through. */
function unconfirmedReason(
  context: AdminContext,
  temporal: Awaited<ReturnType<typeof temporalOf>>,
): string {
  const at = `Temporal at ${temporal.address}`;
  if (temporal.from === 'env') return `${at} (TEMPORAL_ADDRESS) did not confirm its dispatch.`;
  if (temporal.from === 'stack')
    return `${at} (of the \`herald start\` running on ${context.env.HERALD_DATA_DIR}) did not confirm its dispatch.`;
  return (
    `${at} did not confirm its dispatch: no \`herald start\` is running on ` +
    `${context.env.HERALD_DATA_DIR} (it would have written ${stackFileOf(context.env.HERALD_DATA_DIR)}). ` +
    'Run this command in the directory Herald was started in (or with its HERALD_DATA_DIR), or set ' +
    'TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE) to the Temporal its workers use.'
  );
}

/**
 * Starts the campaign's workflow on TEMPORAL_ADDRESS (or the local dev server); false if
 * unconfirmed. `resumedBy`: a paused campaign resumed, audited with its dispatch.
 */
async function dispatch(
  context: AdminContext,
  workspace: Workspace,
  campaignId: number,
  resumedBy?: Actor,
) {
  const { dispatchCampaign } = await import('../../commands/messaging/dispatch-campaign.js');
  const { resumeCampaign } = await import('../../commands/messaging/resume-campaign.js');
  const connected = await connectTemporal(context);
  const reason = unconfirmedReason(context, connected.temporal);
  const temporal = connected.client;
  if (!temporal) return { confirmed: false, reason };
  try {
    const deps = { sql: context.sql, temporal };
    const campaign = { workspaceId: workspace.id, campaignId };
    const { confirmed, workflowId, info } = resumedBy
      ? await resumeCampaign(deps, campaign, resumedBy)
      : await dispatchCampaign(deps, campaign);
    // Its time may have passed while it waited to be resumed: then it goes at once.
    const scheduled = info.scheduledAt && info.scheduledAt.getTime() > Date.now();
    return { confirmed, reason, workflowId, scheduledAt: scheduled ? info.scheduledAt : null };
  } finally {
    await temporal.connection.close();
  }
}

function dispatchResult(
  workspace: Workspace,
  campaign: { id: number; name: string },
  outcome: Awaited<ReturnType<typeof dispatch>>,
  done: string,
): CommandResult {
  const { id } = campaign;
  const named = campaign.name ? ` "${campaign.name}"` : '';
  if (outcome.confirmed) {
    const status = outcome.scheduledAt ? 'scheduled' : 'queued';
    const when = outcome.scheduledAt ? ` for ${outcome.scheduledAt.toISOString()}` : '';
    return {
      json: { id, status, ...(outcome.scheduledAt && { scheduled_at: outcome.scheduledAt }) },
      human: `${done} campaign ${id}${named} in ${workspace.slug}: ${status}${when} (workflow ${outcome.workflowId})`,
    };
  }
  // Saved but not sent yet: a script must not take that for success (exit code 1).
  return {
    json: { id, status: 'paused' },
    human:
      `Campaign ${id}${named} is saved in ${workspace.slug} but not dispatched, so it stays paused. ` +
      `${outcome.reason} Herald's workers dispatch it once they reach Temporal; to dispatch it ` +
      `yourself then, run:\n` +
      `  herald campaign resume --workspace ${workspace.slug} --id ${id}`,
    exitCode: 1,
  };
}

/** `--variables <file.csv>`: the file's text (domain/personalization-csv.ts reads it). */
async function variablesFile(options: Options): Promise<string | undefined> {
  const path = optional(options, 'variables');
  if (path === undefined) return undefined;
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--variables: cannot read ${path} (${(error as Error).message})`);
  }
}

/**
 * herald campaign create --workspace <slug> --name <name> --recipients <e164,...> --body <text>
 *   [--variables <file.csv>: a header row (number, variable names), a row per recipient; its
 *   numbers are the recipients when --recipients is left out]
 *   [--purpose transactional|marketing] [--sender-id <id>] [--provider <slug> | --failover-route <slug>]
 */
export async function campaignCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  // Temporal's modules load only for the commands that start workflows.
  const { createNamedCampaign } = await import('../../commands/messaging/named-campaigns.js');
  const deps = {
    sql: context.sql,
    env: context.env,
    secret: context.secret,
    publicUrl: await publicUrlFor(context),
  };
  const created = await run(
    createNamedCampaign(
      deps,
      operatorActor(),
      {
        workspace: text(options, 'workspace'),
        name: text(options, 'name'),
        recipients: text(options, 'recipients')?.split(','),
        body: text(options, 'body'),
        purpose: optional(options, 'purpose'),
        senderId: optional(options, 'sender-id'),
        provider: optional(options, 'provider'),
        failoverRoute: optional(options, 'failover-route'),
        variables: await variablesFile(options),
        sendAt: optional(options, 'send-at'),
      },
      ({ workspace, id }) => dispatch(context, workspace, id),
    ),
  );
  return dispatchResult(created.workspace, created, created.dispatched, 'Created');
}

/** herald campaign resume --workspace <slug> --id <id>: dispatches a paused campaign, from any door. */
export async function campaignResume(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const id = idOption(options, 'campaign');
  const campaign = await findCampaignOrigin(context.sql, workspace.id, id);
  if (!campaign) throw new UsageError(`${workspace.slug} has no campaign ${id}`);
  // An orphan of an api crash (db/orphan-campaigns.ts): its key's retry sent the other campaign.
  const supersededBy = await findSupersedingCampaign(context.sql, workspace.id, id);
  if (supersededBy !== undefined)
    throw new UsageError(
      `Campaign ${id} was superseded by campaign ${supersededBy}, saved for the same Idempotency-Key; it is never sent`,
    );
  if (campaign.status !== 'paused')
    throw new UsageError(`Campaign ${id} is ${campaign.status}, not paused`);
  const outcome = await dispatch(context, workspace, id, operatorActor());
  return dispatchResult(workspace, { id, name: campaign.name ?? '' }, outcome, 'Resumed');
}

/**
 * herald campaign cancel --workspace <slug> --id <id>: as POST /api/v1/messages/{id}/cancel.
 * Held in Postgres even when Temporal cannot be reached (its run then finds nothing to send).
 */
export async function campaignCancel(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const id = idOption(options, 'campaign');
  const { cancelCampaign } = await import('../../commands/messaging/cancel-campaign.js');
  const { presentCampaign } = await import('../../commands/messaging/presenters.js');
  const { client: temporal } = await connectTemporal(context);
  try {
    const { campaign, alreadyCanceled } = await run(
      cancelCampaign({ sql: context.sql, temporal }, operatorActor(), workspace.id, id),
    );
    const settling = campaign.queuedCount
      ? `; ${campaign.queuedCount} already claimed still settling`
      : '';
    return {
      json: presentCampaign(campaign),
      human: `Campaign ${id} in ${workspace.slug} ${alreadyCanceled ? 'was already' : 'is'} canceled: ${campaign.sentCount} sent, ${campaign.failedCount} failed, ${campaign.canceledCount} canceled${settling}`,
    };
  } finally {
    await temporal?.connection.close();
  }
}

/** A batch's source as people read it (the glossary's words). */
const SOURCE_SHOWN: Record<BatchSource, string> = {
  api: 'API send',
  quick_send: 'Quick Send',
  campaign: 'campaign',
};

/**
 * herald campaign list --workspace <slug> [--limit 1-1000] → {"batches": [...]}: every batch of
 * the workspace (API sends and Quick Sends too, each with its source), newest first.
 */
export async function campaignList(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { batches, workspace } = await run(
    listRecentWorkspaceBatches(context, {
      workspace: text(options, 'workspace'),
      limit: wholeNumber(options, 'limit'),
    }),
  );
  return {
    json: {
      batches: batches.map((batch) => ({
        id: batch.id,
        source: sourceOf(batch),
        name: batch.name,
        status: batch.status,
        purpose: batch.purpose,
        recipients: batch.recipients,
        sent: batch.sent,
        delivered: batch.delivered,
        failed: batch.failedToSend + batch.deliveryFailed,
        created_at: batch.createdAt.toISOString(),
      })),
    },
    human: listing(
      batches,
      [
        'ID',
        'SOURCE',
        'NAME',
        'STATUS',
        'RECIPIENTS',
        'SENT',
        'DELIVERED',
        'FAILED',
        'CREATED (UTC)',
      ],
      (batch) => {
        const source = sourceOf(batch);
        return [
          batch.id,
          source ? SOURCE_SHOWN[source] : null,
          batch.name,
          batch.status,
          batch.recipients,
          batch.sent,
          batch.delivered,
          batch.failedToSend + batch.deliveryFailed,
          tableTime(batch.createdAt),
        ];
      },
      `${workspace.slug} has sent nothing yet`,
    ),
  };
}

export const CAMPAIGN_COMMANDS: AdminCommand[] = [
  {
    name: 'campaign create',
    run: campaignCreate,
    synopses: [
      [
        [
          requiredOption('workspace', '<slug>'),
          requiredOption('name', '<name>'),
          requiredOption('body', '<text>'),
        ],
        [
          optionalOption('recipients', '<e164,e164,...>'),
          optionalOption('variables', '<file.csv: number,name,...; a row per recipient>'),
        ],
        [optionalOption('purpose', 'transactional|marketing'), optionalOption('sender-id', '<id>')],
        [oneOf(optionalOption('provider', '<slug>'), optionalOption('failover-route', '<slug>'))],
        [optionalOption('send-at', '<ISO 8601 with offset, 1 min to 35 days ahead>')],
      ],
    ],
  },
  {
    name: 'campaign list',
    run: campaignList,
    synopses: [
      [
        [
          requiredOption('workspace', '<slug>'),
          optionalOption('limit', `${BATCH_LIST_LIMIT.min}-${BATCH_LIST_LIMIT.max}`),
        ],
      ],
    ],
    summary: `every batch, newest first (${BATCH_LIST_LIMIT.default} unless --limit)`,
  },
  {
    name: 'campaign cancel',
    run: campaignCancel,
    synopses: [[[requiredOption('workspace', '<slug>'), requiredOption('id', '<id>')]]],
    summary: 'cancel a scheduled or sending campaign',
  },
  {
    name: 'campaign resume',
    run: campaignResume,
    synopses: [[[requiredOption('workspace', '<slug>'), requiredOption('id', '<id>')]]],
    summary: 'dispatch a campaign left paused',
  },
];
