/**
 * Quick Send from the console: the REST send's rules (domain/send-request.ts), routing and
 * workflow, for a batch recorded with source `quick_send`. Recipients arrive as a person pastes
 * them (one a line, or separated by commas); their errors are reported by line.
 */
import { isSchedulable, SCHEDULE_WINDOW_ERROR } from '../../domain/campaign-status.js';
import { type FieldErrors, HeraldError } from '../../domain/errors.js';
import { campaignSegments, countSegments } from '../../domain/segments.js';
import { validateSendRequest } from '../../domain/send-request.js';
import { erasedOptOutForms } from '../../security/recipient-hash.js';
import { campaignWorkflowId } from '../../workflows/definitions.js';
import type { CommandDeps } from '../deps.js';
import { insertCampaignWithinCap } from '../fraud-guard/send-checks.js';
import { resolveRouting } from '../providers/routing.js';
import { dispatchCampaign } from './dispatch-campaign.js';

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

export async function sendQuickSend(
  deps: Pick<CommandDeps, 'sql' | 'temporal' | 'env' | 'publicUrl' | 'secret'>,
  workspaceId: number,
  input: QuickSendInput,
): Promise<QuickSendResult> {
  const lines = recipientLines(input.recipients ?? '');
  const routing = input.routing ?? 'own';
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
    send_at: blank(input.sendAt),
  };
  const validation = validateSendRequest(body);
  if (!validation.ok) return { outcome: 'invalid', errors: byLine(validation.errors, lines) };
  const request = validation.value;
  if (request.sendAt && !isSchedulable(request.sendAt, new Date()))
    return { outcome: 'invalid', errors: { send_at: [SCHEDULE_WINDOW_ERROR] } };
  let resolved: Awaited<ReturnType<typeof resolveRouting>>;
  try {
    resolved = await resolveRouting(
      deps.sql,
      { workspaceId, routingType: null, providerSlug: null, failoverRouteSlug: null },
      request,
    );
  } catch (error) {
    if (error instanceof HeraldError && error.fieldErrors)
      return { outcome: 'invalid', errors: byLine(error.fieldErrors, lines) };
    throw error;
  }
  const { id } = await insertCampaignWithinCap(deps.sql, {
    workspaceId,
    apiKeyId: null,
    source: 'quick_send',
    // The name given in the form is the batch's name in reports, and its reference.
    name: request.reference,
    reference: request.reference,
    purpose: request.messagePurpose,
    body: request.message,
    senderId: request.senderId,
    ...resolved,
    sendAt: request.sendAt,
    recipients: request.recipients,
    erasedOptOuts: erasedOptOutForms(deps.secret, request.messagePurpose, request.recipients),
    validityHours: deps.env.MESSAGE_VALIDITY_HOURS,
    segments: campaignSegments(request.message, deps.publicUrl),
    workflowIdOf: (campaignId) => campaignWorkflowId(workspaceId, null, campaignId),
  });
  const { confirmed } = await dispatchCampaign(deps, { workspaceId, campaignId: id });
  return { outcome: 'sent', campaignId: id, confirmed, recipients: request.recipients.length };
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
