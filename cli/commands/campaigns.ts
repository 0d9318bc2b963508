/**
 * Named campaigns an operator starts: `campaign create` is the use-case of
 * commands/named-campaigns.ts (the console's Create campaign form runs the same), dispatched here
 * by a Temporal connection made for the command; `campaign resume` dispatches one left paused;
 * `campaign cancel` cancels one.
 */

import { readFile } from 'node:fs/promises';
import { findWorkspace } from '../../commands/workspaces.js';
import { publicUrlOf, temporalAddressOf } from '../../config/env.js';
import { findCampaignOrigin } from '../../db/campaigns.js';
import { findSupersedingCampaign } from '../../db/orphan-campaigns.js';
import type { Workspace } from '../../db/workspaces.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import {
  type CommandResult,
  idOption,
  type Options,
  optional,
  required,
  run,
  text,
} from './options.js';
import {
  type AdminCommand,
  oneOf,
  optional as optionalOption,
  required as requiredOption,
} from './table.js';

const workspaceBySlug = (context: AdminContext, slug: string) => run(findWorkspace(context, slug));

/** A client of TEMPORAL_ADDRESS (or the local dev server), or null when it cannot be reached. */
async function connectTemporal(context: AdminContext) {
  // The Temporal client loads only here: the other admin commands start without it.
  const { DISPATCH_CONFIRM_MS } = await import('../../commands/dispatch-campaign.js');
  const { connectTemporalClient } = await import('../../temporal/client.js');
  const address = temporalAddressOf(context.env);
  try {
    const client = await connectTemporalClient(address, context.env.TEMPORAL_NAMESPACE, {
      connectTimeoutMs: DISPATCH_CONFIRM_MS,
    });
    return { address, client };
  } catch {
    return { address, client: null };
  }
}

/** Starts the campaign's workflow on TEMPORAL_ADDRESS (or the local dev server); false if unconfirmed. */
async function dispatch(context: AdminContext, workspace: Workspace, campaignId: number) {
  const { dispatchCampaign } = await import('../../commands/dispatch-campaign.js');
  const { address, client: temporal } = await connectTemporal(context);
  if (!temporal) return { confirmed: false, address };
  try {
    const { confirmed, workflowId, info } = await dispatchCampaign(
      { sql: context.sql, temporal },
      { workspaceId: workspace.id, campaignId },
    );
    // Its time may have passed while it waited to be resumed: then it goes at once.
    const scheduled = info.scheduledAt && info.scheduledAt.getTime() > Date.now();
    return { confirmed, address, workflowId, scheduledAt: scheduled ? info.scheduledAt : null };
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
  return {
    json: { id, status: 'paused' },
    human:
      `Campaign ${id}${named} is saved in ${workspace.slug}, but Temporal at ${outcome.address} did not ` +
      `confirm its dispatch, so it stays paused. Herald's workers dispatch it once Temporal is ` +
      `reachable; to dispatch it yourself then, run:\n` +
      `  herald campaign resume --workspace ${workspace.slug} --id ${id}`,
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
  const { createNamedCampaign } = await import('../../commands/named-campaigns.js');
  const deps = {
    sql: context.sql,
    env: context.env,
    secret: context.secret,
    publicUrl: publicUrlOf(context.env),
  };
  const created = await run(
    createNamedCampaign(
      deps,
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
  const outcome = await dispatch(context, workspace, id);
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
  const { cancelCampaign } = await import('../../commands/cancel-campaign.js');
  const { presentCampaign } = await import('../../commands/presenters.js');
  const { client: temporal } = await connectTemporal(context);
  try {
    const { campaign, alreadyCanceled } = await run(
      cancelCampaign({ sql: context.sql, temporal }, workspace.id, id),
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
