import { ownProviderUrlOf } from '../../config/env.js';
import { type InboundDelivery, recordInboundDelivery } from '../../db/inbound-messages.js';
import { recordOtpDelivery } from '../../db/otp-requests.js';
import { findProvider, findReferenceWorkspace } from '../../db/providers.js';
import { findWorkspaceBySlug } from '../../db/workspaces.js';
import { parseMessageReference } from '../../domain/message-reference.js';
import {
  OWN_PROVIDER_SLUG,
  ownProviderRecord,
  type ReceiptParser,
  type ReceiptRequest,
  type WebhookParser,
} from '../../domain/provider-definition.js';
import { SLUG as SLUG_FORMAT } from '../../domain/request-schema.js';
import { erasedRecipientForms } from '../../security/recipient-hash.js';
import { observeReceipt } from '../../telemetry/metrics.js';
import { startHelpReplyWorkflow } from '../../temporal/workflow-starts.js';
import type { CommandDeps } from '../deps.js';
import { webhookParserOf } from '../providers/providers.js';
import type { ReceiptCaches } from './receipt-caches.js';

type Deps = Pick<CommandDeps, 'env' | 'sql' | 'secret' | 'providerTypes' | 'temporal'>;
/** The receipt endpoint's: with the per-process caches its composition root made. */
type ReceiptDeps = Deps & { receipts: ReceiptCaches };

/** Workspace and provider slugs (domain/request-schema.ts), in either case: a callback URL may be typed. */
const SLUG = new RegExp(SLUG_FORMAT.source, 'i');

/**
 * What verifies and parses the receipts posted to `/webhooks/providers/<slug>` for a workspace:
 * the provider's adapter, whether or not it is still active (receipts outlive a disable).
 */
async function receiptParserFor(
  deps: Deps,
  workspaceId: number,
  slug: string,
): Promise<ReceiptParser | undefined> {
  const record =
    slug === OWN_PROVIDER_SLUG
      ? ownProviderRecord(workspaceId, ownProviderUrlOf(deps.env))
      : await findProvider(deps.sql, workspaceId, slug);
  return record && webhookParserOf(deps, record);
}

/** The adapter of a workspace provider that posts recipients' replies, if it does. */
async function inboundParserFor(
  deps: Deps,
  workspaceId: number,
  slug: string,
): Promise<Required<Pick<WebhookParser, 'parseInbound'>> | undefined> {
  const record = await findProvider(deps.sql, workspaceId, slug);
  const parser = record && webhookParserOf(deps, record);
  const parseInbound = parser?.parseInbound?.bind(parser);
  return parseInbound && { parseInbound };
}

/** The workspace a message reference belongs to: a campaign's remembered, an OTP request's read. */
async function referenceWorkspace(
  deps: ReceiptDeps,
  target: NonNullable<ReturnType<typeof parseMessageReference>>,
): Promise<number | undefined> {
  if (!('campaignId' in target)) return findReferenceWorkspace(deps.sql, target);
  const known = deps.receipts.campaignWorkspace(target.campaignId);
  if (known !== undefined) return known;
  const workspaceId = await findReferenceWorkspace(deps.sql, target);
  if (workspaceId !== undefined)
    deps.receipts.rememberCampaignWorkspace(target.campaignId, workspaceId);
  return workspaceId;
}

export type ReceiptOutcome =
  | { kind: 'recorded' }
  /** Well-formed, but about a message or provider Herald does not know, or not a final status: acknowledged so the provider stops retrying. */
  | { kind: 'dropped' }
  | { kind: 'no_such_provider' }
  | { kind: 'no_reference' }
  | { kind: 'forbidden' }
  | { kind: 'invalid'; message: string };

/**
 * A provider's delivery receipt for the message `reference` names (from the callback URL's `ref`
 * when the vendor does not echo one, e.g. Twilio, else from the body). The reference names the
 * message and so the workspace; that workspace's provider `slug` verifies and parses the receipt.
 */
export async function recordReceipt(
  deps: ReceiptDeps,
  slug: string,
  reference: string | null,
  request: ReceiptRequest,
): Promise<ReceiptOutcome> {
  if (!SLUG.test(slug)) return { kind: 'no_such_provider' };
  const target = reference === null ? undefined : parseMessageReference(reference);
  if (!target) return { kind: 'no_reference' };
  const workspaceId = await referenceWorkspace(deps, target);
  const parser =
    workspaceId === undefined ? undefined : await receiptParserFor(deps, workspaceId, slug);
  if (!parser) return { kind: 'dropped' };

  const parsed = parser.parseReceipt(request);
  if (parsed.kind === 'forbidden' || parsed.kind === 'invalid') return parsed;
  if (parsed.kind === 'ignored') return { kind: 'dropped' };
  if (parsed.kind === 'inbound') {
    // A reply to the message the reference names (the simulator's): that message's campaign.
    if (parsed.reference !== reference || workspaceId === undefined) return { kind: 'dropped' };
    await recordInbound(deps, {
      workspaceId,
      providerSlug: slug,
      ...parsed.message,
      campaignId: 'campaignId' in target ? target.campaignId : null,
    });
    return { kind: 'recorded' };
  }
  const { receipt } = parsed;
  // A body naming another message than the one the URL was issued for is not trusted.
  if (receipt.reference !== null && receipt.reference !== reference) return { kind: 'dropped' };
  const delivery = {
    provider: slug,
    providerMessageId: receipt.providerMessageId,
    status: receipt.status,
    errorCode: receipt.errorCode,
    at: receipt.at,
  };
  const recorded =
    'campaignId' in target
      ? await deps.receipts.recordDelivery({ ...target, ...delivery })
      : await recordOtpDelivery(deps.sql, { requestId: target.otpRequestId, ...delivery });
  observeReceipt(receipt.status, recorded);
  return { kind: 'recorded' };
}

export type ReplyOutcome =
  | { kind: 'recorded' }
  | { kind: 'no_such_provider' }
  | { kind: 'forbidden' }
  | { kind: 'invalid'; message: string };

/** A reply as db/inbound-messages.ts takes it, HELP's answer started through this api's client. */
function recordInbound(deps: Deps, delivery: InboundDelivery) {
  return recordInboundDelivery(deps.sql, delivery, {
    erasedForms: (number) => erasedRecipientForms(deps.secret, number),
    startHelpReply: (reply) => startHelpReplyWorkflow(deps.temporal, reply),
  });
}

/**
 * A recipient's reply, posted by a provider that forwards them (Twilio's "A message comes in"):
 * STOP opts the sender out of the workspace's marketing messages, START opts them back in; other
 * text is stored for the workspace (its Inbox, `message.received`), HELP answered when configured.
 */
export async function recordReply(
  deps: Deps,
  workspaceSlug: string,
  providerSlug: string,
  request: ReceiptRequest,
): Promise<ReplyOutcome> {
  const named = SLUG.test(workspaceSlug) && SLUG.test(providerSlug);
  const workspace = named ? await findWorkspaceBySlug(deps.sql, workspaceSlug) : undefined;
  const parser = workspace && (await inboundParserFor(deps, workspace.id, providerSlug));
  if (!workspace || !parser) return { kind: 'no_such_provider' };
  const parsed = parser.parseInbound(request);
  if (parsed.kind !== 'inbound') return parsed;
  await recordInbound(deps, { workspaceId: workspace.id, providerSlug, ...parsed.message });
  return { kind: 'recorded' };
}
