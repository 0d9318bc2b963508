/**
 * Quick Send from the console: the REST send's rules (domain/send-request.ts) and save
 * (commands/messaging/save-campaign.ts), for a batch recorded with source `quick_send`.
 * Recipients arrive as a person pastes them (one a line, or separated by commas); their errors
 * are reported by line.
 */
import type { SavedCampaign } from '../../db/campaigns.js';
import { type FieldErrors, HeraldError } from '../../domain/errors.js';
import { countSegments } from '../../domain/segments.js';
import { validateSendRequest } from '../../domain/send-request.js';
import type { Actor } from '../actor.js';
import type { CommandDeps } from '../deps.js';
import { type BatchAudit, dispatchSaved, saveCampaign } from './save-campaign.js';

export interface QuickSendInput {
  /** One number a line (a CSV's first column), or separated by commas or semicolons. */
  recipients?: string;
  message?: string;
  purpose?: string;
  senderId?: string;
  /** `own` (the service's provider), `provider` (with `provider`) or `failover` (with `failoverRoute`). */
  routing?: string;
  provider?: string;
  failoverRoute?: string;
  /** Shown as the batch's name; optional. */
  reference?: string;
  /** When to send it, ISO 8601 with an offset (REST's send_at); unset: now. */
  sendAt?: string;
}

export type QuickSendResult =
  | { outcome: 'sent'; campaignId: number; confirmed: boolean; recipients: number }
  | { outcome: 'invalid'; errors: Record<string, string[]> };

/** The pasted recipients as lines: blank lines dropped, each with its line number. */
export function recipientLines(text: string): { line: number; value: string }[] {
  return text
    .split(/\r?\n/)
    .flatMap((line, index) =>
      line.split(/[,;\t]/).map((value) => ({ line: index + 1, value: value.trim() })),
    )
    .filter((entry) => entry.value !== '');
}

const blank = (value: string | undefined) => {
  const text = value?.trim();
  return text === undefined || text === '' ? null : text;
};

/** The REST errors, with `recipients.N` told as the line the number was pasted on. */
function byLine(errors: FieldErrors, lines: { line: number }[]): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const [field, messages] of Object.entries(errors)) {
    const item = /^recipients\.(\d+)$/.exec(field);
    const key = item ? 'recipients' : field;
    const told = item
      ? messages.map(
          (message) =>
            `Line ${lines[Number(item[1])]?.line ?? 0}: ${message.replace(`The ${field} field`, 'the number').replace(`${field}`, 'number')}`,
        )
      : messages;
    result[key] = [...(result[key] ?? []), ...told];
  }
  return result;
}

/** The batch's audit line: written with its save, `dispatch_confirmed` once its start is. */
const quickSendAudit = (actor: Actor, recipients: number, sendAt: string | null): BatchAudit => ({
  actor,
  line: (campaignId) => ({
    action: 'quick_send.sent',
    target: `batch #${campaignId}`,
    details: { recipients, dispatch_confirmed: false, ...(sendAt && { scheduled_at: sendAt }) },
  }),
});

/** Refusals by line; the batch saved (commands/messaging/save-campaign.ts) and dispatched. */
export async function sendQuickSend(
  deps: Pick<CommandDeps, 'sql' | 'temporal' | 'env' | 'publicUrl' | 'secret'>,
  actor: Actor,
  workspaceId: number,
  input: QuickSendInput,
): Promise<QuickSendResult> {
  const lines = recipientLines(input.recipients ?? '');
  const routing = input.routing ?? 'own';
  const sendAt = blank(input.sendAt);
  const body = {
    recipients: lines.map((entry) => entry.value),
    message: input.message ?? '',
    message_purpose: blank(input.purpose),
    sender_id: blank(input.senderId),
    routing_type: routing === 'failover' ? 'failover' : 'direct',
    provider_slug:
      routing === 'provider'
        ? (blank(input.provider) ?? '')
        : routing === 'failover'
          ? null
          : 'own',
    failover_route_slug: routing === 'failover' ? (blank(input.failoverRoute) ?? '') : null,
    reference: blank(input.reference),
    send_at: sendAt,
  };
  const validation = validateSendRequest(body);
  if (!validation.ok) return { outcome: 'invalid', errors: byLine(validation.errors, lines) };
  const request = validation.value;
  const audit = quickSendAudit(actor, request.recipients.length, sendAt);
  let saved: SavedCampaign;
  try {
    saved = await saveCampaign(
      deps,
      // The name given in the form is the batch's name in reports, and its reference.
      {
        workspaceId,
        apiKey: null,
        source: 'quick_send',
        name: request.reference,
        idempotencyKey: null,
      },
      request,
      { audit },
    );
  } catch (error) {
    if (error instanceof HeraldError && error.fieldErrors)
      return { outcome: 'invalid', errors: byLine(error.fieldErrors, lines) };
    throw error;
  }
  const confirmed = await dispatchSaved(deps, workspaceId, saved, audit);
  return {
    outcome: 'sent',
    campaignId: saved.id,
    confirmed,
    recipients: request.recipients.length,
  };
}

export interface MessageMeasure {
  characters: number;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}

/** The live counter under the message box: the segment rules the send is billed by. */
export function measureMessage(text: string): MessageMeasure {
  const { encoding, segments } = countSegments(text);
  return { characters: [...text].length, encoding, segments: text === '' ? 0 : segments };
}
