import { ownProviderUrlOf } from '../../config/env.js';
import { recordDeliveryCoalesced } from '../../db/campaign-messages.js';
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
import { erasedRecipientForms } from '../../security/recipient-hash.js';
import { observeReceipt } from '../../telemetry/metrics.js';
import { startHelpReplyWorkflow } from '../../temporal/workflow-starts.js';
import type { CommandDeps } from '../deps.js';
import { webhookParserOf } from '../providers/providers.js';

type Deps = Pick<CommandDeps, 'env' | 'sql' | 'secret' | 'providerTypes' | 'temporal'>;

/** Workspace and provider slugs as they are made (commands/team/workspaces.ts, commands/input.ts), a little wider. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

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

/** Campaigns whose workspace each pool remembers: more than are ever sending at once. */
const REMEMBERED_CAMPAIGNS = 10_000;
const campaignWorkspacesByPool = new WeakMap<Deps['sql'], Map<number, number>>();

/**
 * The workspace a message reference belongs to. A campaign's never changes and its receipts come
 * by the thousand, so it is remembered (the oldest forgotten first); an OTP request has one.
 */
async function referenceWorkspace(
  sql: Deps['sql'],
  target: NonNullable<ReturnType<typeof parseMessageReference>>,
): Promise<number | undefined> {
  if (!('campaignId' in target)) return findReferenceWorkspace(sql, target);
  let remembered = campaignWorkspacesByPool.get(sql);
  if (!remembered) {
    remembered = new Map();
    campaignWorkspacesByPool.set(sql, remembered);
  }
  const known = remembered.get(target.campaignId);
  if (known !== undefined) return known;
  const workspaceId = await findReferenceWorkspace(sql, target);
  if (workspaceId === undefined) return undefined;
  if (remembered.size >= REMEMBERED_CAMPAIGNS)
    remembered.delete(remembered.keys().next().value as number);
  remembered.set(target.campaignId, workspaceId);
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
  deps: Deps,
  slug: string,
  reference: string | null,
  request: ReceiptRequest,
): Promise<ReceiptOutcome> {
  if (!SLUG.test(slug)) return { kind: 'no_such_provider' };
  const target = reference === null ? undefined : parseMessageReference(reference);
  if (!target) return { kind: 'no_reference' };
  const workspaceId = await referenceWorkspace(deps.sql, target);
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
      ? await recordDeliveryCoalesced(deps.sql, { ...target, ...delivery })
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
