/**
 * Saving a batch, whichever door it comes through: REST's POST /api/v1/messages, the console's
 * Quick Send, or a named campaign (`herald campaign create`, the console's Create campaign form).
 * The request is read by the send's rules (domain/send-request.ts) at the door; here come the rules
 * that need the clock or the database (the schedule window, routing, the fraud guard's geo
 * permissions and daily cap), then the save under the campaign's workflow id, with the door's audit
 * line in the same transaction, and, once committed, the workflow's start. Quiet hours hold messages
 * at send time (activities/campaign.ts), whatever the door. Each door keeps only its framing: how
 * it reads its input, how it names a refused field, what it answers.
 */
import type { ApiKeyRouting } from '../../db/api-keys.js';
import { amendAuditDetails } from '../../db/audit-log.js';
import type { SavedCampaign } from '../../db/campaigns.js';
import type { TransactionSql } from '../../db/client.js';
import { isSchedulable, SCHEDULE_WINDOW_ERROR } from '../../domain/campaign-status.js';
import { validationError } from '../../domain/errors.js';
import type { GuardOverrides } from '../../domain/fraud-guard.js';
import type { SendRequest } from '../../domain/send-request.js';
import { erasedOptOutForms } from '../../security/recipient-hash.js';
import { campaignWorkflowId } from '../../workflows/definitions.js';
import type { Actor } from '../actor.js';
import { type AuditLine, writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { insertCampaignWithinCap } from '../fraud-guard/send-checks.js';
import { resolveRouting } from '../providers/routing.js';
import { campaignTexts } from './campaign-texts.js';
import { dispatchCampaign } from './dispatch-campaign.js';

/** Who stands behind a batch, and how it is recorded. */
export interface BatchOrigin {
  workspaceId: number;
  /**
   * The REST send's API key: its routing applies when the request names none. Null where no key
   * stands behind the batch: it goes through `own` unless the request names a provider or route.
   */
  apiKey: (ApiKeyRouting & { keyId: number; guardSettings?: GuardOverrides | null }) | null;
  source: 'api' | 'quick_send' | 'campaign';
  /** The batch's name in reports; null for an API send. */
  name: string | null;
  /** The Idempotency-Key the workflow id is named by; null: named by the campaign's id. */
  idempotencyKey: string | null;
}

/** The door's audit line, written with the campaign: who, and the line once the id is known. */
export interface BatchAudit {
  actor: Actor;
  line: (campaignId: number) => AuditLine;
}

/** Refuses a send whose time is outside the schedule window (422 on `send_at`). */
export function checkSchedule(request: Pick<SendRequest, 'sendAt'>): void {
  if (request.sendAt && !isSchedulable(request.sendAt, new Date()))
    throw validationError({ send_at: [SCHEDULE_WINDOW_ERROR] });
}

const NO_KEY = { routingType: null, providerSlug: null, failoverRouteSlug: null };

/**
 * Saves the batch, paused until its dispatch is confirmed. Refusals are HeraldErrors (422 with
 * field errors keyed by the REST body's fields, 429 for the daily cap) that each door frames.
 * `alongside` runs in the save's transaction after the audit line, as its last step (REST ties
 * the campaign to its Idempotency-Key there): if it throws, nothing is saved.
 */
export async function saveCampaign(
  deps: Pick<CommandDeps, 'sql' | 'env' | 'publicUrl' | 'secret'>,
  origin: BatchOrigin,
  request: SendRequest,
  options: {
    audit?: BatchAudit;
    alongside?: (tx: TransactionSql, campaign: { id: number }) => Promise<void>;
    /** Told once only the commit is left (db/campaigns.ts insertCampaign); may still refuse. */
    committing?: (campaign: { id: number }) => void;
  } = {},
): Promise<SavedCampaign> {
  const { workspaceId, apiKey, idempotencyKey } = origin;
  checkSchedule(request);
  // Read while the campaign's id is drawn (insertCampaign).
  const routing = resolveRouting(deps.sql, { workspaceId, ...(apiKey ?? NO_KEY) }, request);
  const { audit, alongside, committing } = options;
  return insertCampaignWithinCap(
    deps.sql,
    routing.then((routing) => ({
      workspaceId,
      apiKeyId: apiKey?.keyId ?? null,
      source: origin.source,
      name: origin.name,
      reference: request.reference,
      purpose: request.messagePurpose,
      body: request.message,
      senderId: request.senderId,
      ...routing,
      recipients: request.recipients,
      erasedOptOuts: erasedOptOutForms(deps.secret, request.messagePurpose, request.recipients),
      sendAt: request.sendAt,
      validityHours: deps.env.MESSAGE_VALIDITY_HOURS,
      ...campaignTexts(request, deps.publicUrl),
      workflowIdOf: (id) => campaignWorkflowId(workspaceId, idempotencyKey, id),
    })),
    async (tx, campaign) => {
      if (audit) await writeAudit(tx, audit.actor, workspaceId, audit.line(campaign.id));
      await alongside?.(tx, campaign);
    },
    committing,
  );
}

/**
 * An audit line written with the save says `dispatch_confirmed: false`: the start is confirmed
 * only after the commit. Once it is, the line says so.
 */
export async function auditDispatchConfirmed(
  deps: Pick<CommandDeps, 'sql'>,
  workspaceId: number,
  line: AuditLine,
): Promise<void> {
  await amendAuditDetails(deps.sql, workspaceId, line, { dispatch_confirmed: true });
}

/**
 * Starts a saved batch's workflow (commands/messaging/dispatch-campaign.ts) and, once confirmed,
 * completes its audit line: the console's doors. Unconfirmed, the batch stays paused for the
 * dispatch sweeper.
 */
export async function dispatchSaved(
  deps: Pick<CommandDeps, 'sql' | 'temporal'>,
  workspaceId: number,
  saved: SavedCampaign,
  audit?: BatchAudit,
): Promise<boolean> {
  const { confirmed } = await dispatchCampaign(deps, { workspaceId, campaignId: saved.id });
  if (confirmed && audit) await auditDispatchConfirmed(deps, workspaceId, audit.line(saved.id));
  return confirmed;
}
