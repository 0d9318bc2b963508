/**
 * Named campaigns an operator starts: checked by the REST send's own rules (domain validation,
 * then routing), saved with source `campaign`, and dispatched by the same workflow start. A
 * named campaign has no Idempotency-Key: it is saved with its workflow id in the same
 * transaction, so whatever stops the command after that (Temporal not confirming, the process
 * dying) leaves it `paused` under that id, and `campaign resume` starts exactly that workflow.
 */

import { checkFailoverRoute } from '../../commands/failover-routes.js';
import { checkProvider } from '../../commands/providers.js';
import { resolveRouting } from '../../commands/routing.js';
import { findWorkspace } from '../../commands/workspaces.js';
import { publicUrlOf, temporalAddressOf } from '../../config/env.js';
import { findCampaignOrigin, insertCampaign } from '../../db/campaigns.js';
import { findSupersedingCampaign } from '../../db/orphan-campaigns.js';
import type { Workspace } from '../../db/workspaces.js';
import { type FieldErrors, HeraldError } from '../../domain/errors.js';
import { campaignSegments } from '../../domain/segments.js';
import { validateSendRequest } from '../../domain/send-request.js';
import { characters } from '../../domain/validation.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import { type CommandResult, idOption, type Options, optional, required, run } from './options.js';
import {
  type AdminCommand,
  oneOf,
  optional as optionalOption,
  required as requiredOption,
} from './table.js';

// The workspace and routing options, checked as every command checks them.

const workspaceBySlug = (context: AdminContext, slug: string) => run(findWorkspace(context, slug));

const checkProviderOption = (context: AdminContext, workspace: Workspace, slug: string) =>
  run(checkProvider(context, workspace, slug, { field: 'provider' }));

const checkFailoverRouteOption = (context: AdminContext, workspace: Workspace, slug: string) =>
  run(checkFailoverRoute(context, workspace, slug, { field: 'failoverRoute' }));

/** The option that carries each field of the REST request body. */
const OPTION_OF_FIELD: Record<string, string> = {
  recipients: 'recipients',
  message: 'body',
  message_purpose: 'purpose',
  sender_id: 'sender-id',
  provider_slug: 'provider',
  routing_type: 'failover-route',
  failover_route_slug: 'failover-route',
};

/** The send rules' messages, each led by the option it is about. */
function usageErrorOf(errors: FieldErrors): UsageError {
  const lines = Object.entries(errors).flatMap(([field, messages]) => {
    const option = OPTION_OF_FIELD[field.split('.')[0] ?? field] ?? field;
    return messages.map((message) => `--${option}: ${message}`);
  });
  return new UsageError(lines.join('; '));
}

/** Starts the campaign's workflow on TEMPORAL_ADDRESS (or the local dev server); false if unconfirmed. */
async function dispatch(context: AdminContext, workspace: Workspace, campaignId: number) {
  // The Temporal client loads only here: the other admin commands start without it.
  const { DISPATCH_CONFIRM_MS, dispatchCampaign } = await import(
    '../../commands/dispatch-campaign.js'
  );
  const { campaignWorkflowId } = await import('../../workflows/definitions.js');
  const { connectTemporalClient } = await import('../../temporal/client.js');
  const address = temporalAddressOf(context.env);
  const workflowId = campaignWorkflowId(workspace.id, null, campaignId);
  let temporal: Awaited<ReturnType<typeof connectTemporalClient>>;
  try {
    temporal = await connectTemporalClient(address, context.env.TEMPORAL_NAMESPACE, {
      connectTimeoutMs: DISPATCH_CONFIRM_MS,
    });
  } catch {
    return { confirmed: false, address, workflowId };
  }
  try {
    const { confirmed } = await dispatchCampaign(
      { sql: context.sql, temporal },
      { workspaceId: workspace.id, campaignId, key: null },
    );
    return { confirmed, address, workflowId };
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
  const { id, name } = campaign;
  if (outcome.confirmed) {
    return {
      json: { id, status: 'queued' },
      human: `${done} campaign ${id} "${name}" in ${workspace.slug}: queued (workflow ${outcome.workflowId})`,
    };
  }
  return {
    json: { id, status: 'paused' },
    human:
      `Campaign ${id} "${name}" is saved in ${workspace.slug}, but Temporal at ${outcome.address} did not ` +
      `confirm its dispatch, so it stays paused. Once Temporal is reachable, run:\n` +
      `  herald campaign resume --workspace ${workspace.slug} --id ${id}`,
  };
}

/**
 * herald campaign create --workspace <slug> --name <name> --recipients <e164,...> --body <text>
 *   [--purpose transactional|marketing] [--sender-id <id>] [--provider <slug> | --failover-route <slug>]
 */
export async function campaignCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const name = required(options, 'name');
  if (characters(name) > 200) throw new UsageError('--name must be at most 200 characters');
  const recipients = required(options, 'recipients')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const body = required(options, 'body');
  const provider = optional(options, 'provider');
  const failoverRoute = optional(options, 'failover-route');
  if (provider && failoverRoute)
    throw new UsageError('--provider and --failover-route are exclusive');

  const validation = validateSendRequest({
    recipients,
    message: body,
    message_purpose: optional(options, 'purpose'),
    sender_id: optional(options, 'sender-id'),
    provider_slug: provider,
    ...(failoverRoute && { routing_type: 'failover', failover_route_slug: failoverRoute }),
  });
  if (!validation.ok) throw usageErrorOf(validation.errors);
  const request = validation.value;
  if (provider) await checkProviderOption(context, workspace, provider);
  if (failoverRoute) await checkFailoverRouteOption(context, workspace, failoverRoute);
  // No API key stands behind the campaign: without an option it goes through `own`.
  const noKey = { routingType: null, providerSlug: null, failoverRouteSlug: null };
  let routing: Awaited<ReturnType<typeof resolveRouting>>;
  try {
    routing = await resolveRouting(context.sql, { workspaceId: workspace.id, ...noKey }, request);
  } catch (error) {
    if (error instanceof HeraldError && error.fieldErrors) throw usageErrorOf(error.fieldErrors);
    throw error;
  }

  // Temporal's modules load only for the commands that start workflows.
  const { campaignWorkflowId } = await import('../../workflows/definitions.js');
  const { id } = await insertCampaign(context.sql, {
    workspaceId: workspace.id,
    apiKeyId: null,
    source: 'campaign',
    name,
    reference: null,
    purpose: request.messagePurpose,
    body: request.message,
    senderId: request.senderId,
    ...routing,
    validityHours: context.env.MESSAGE_VALIDITY_HOURS,
    segments: campaignSegments(request.message, publicUrlOf(context.env)),
    recipients: request.recipients,
    workflowIdOf: (campaignId) => campaignWorkflowId(workspace.id, null, campaignId),
  });
  const outcome = await dispatch(context, workspace, id);
  return dispatchResult(workspace, { id, name }, outcome, 'Created');
}

/** herald campaign resume --workspace <slug> --id <id>: dispatches a paused named campaign. */
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
  // An API send is resumed by retrying it with its Idempotency-Key, which names its workflow.
  if (campaign.source !== 'campaign')
    throw new UsageError(
      `Campaign ${id} was sent through the API; retry its request with the same Idempotency-Key to resume it`,
    );
  if (campaign.status !== 'paused')
    throw new UsageError(`Campaign ${id} is ${campaign.status}, not paused`);
  const outcome = await dispatch(context, workspace, id);
  return dispatchResult(workspace, { id, name: campaign.name ?? '' }, outcome, 'Resumed');
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
          requiredOption('recipients', '<e164,e164,...>'),
          requiredOption('body', '<text>'),
        ],
        [optionalOption('purpose', 'transactional|marketing'), optionalOption('sender-id', '<id>')],
        [oneOf(optionalOption('provider', '<slug>'), optionalOption('failover-route', '<slug>'))],
      ],
    ],
  },
  {
    name: 'campaign resume',
    run: campaignResume,
    synopses: [[[requiredOption('workspace', '<slug>'), requiredOption('id', '<id>')]]],
    summary: 'dispatch a campaign left paused',
  },
];
