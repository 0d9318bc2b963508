/**
 * Named campaigns (`herald campaign create`, the console's Create campaign form): checked by the
 * REST send's own rules and saved by its save (commands/messaging/save-campaign.ts) with source
 * `campaign` and its audit line, then handed to the caller's dispatch. A named campaign has no
 * Idempotency-Key: it is saved with its workflow id in the same transaction, so whatever stops
 * the dispatch (Temporal not confirming, the process dying) leaves it `paused` under that id, and
 * `campaign resume` starts exactly that workflow. Each front end reaches Temporal its own way
 * (the CLI connects only for this), so the dispatch is the caller's.
 */
import type { Workspace } from '../../db/workspaces.js';
import { type FieldErrors, HeraldError } from '../../domain/errors.js';
import { renderOptOutLink } from '../../domain/opt-out.js';
import { readPersonalizationCsv } from '../../domain/personalization-csv.js';
import { countSegments } from '../../domain/segments.js';
import { validateSendRequest } from '../../domain/send-request.js';
import { characters } from '../../domain/validation.js';
import type { Actor } from '../actor.js';
import type { CommandDeps } from '../deps.js';
import {
  fieldsOf,
  InputError,
  invalid,
  type MessagePart,
  optionalText,
  requiredText,
} from '../input.js';
import { checkFailoverRoute } from '../providers/failover-routes.js';
import { checkProvider } from '../providers/providers.js';
import { findWorkspace } from '../team/workspaces.js';
import {
  auditDispatchConfirmed,
  type BatchAudit,
  checkSchedule,
  saveCampaign,
} from './save-campaign.js';

export interface NamedCampaignInput {
  workspace?: string;
  name?: string;
  /** Numbers as given: each trimmed, blanks dropped. */
  recipients?: string[];
  body?: string;
  /** `transactional` (default) or `marketing`. */
  purpose?: string;
  senderId?: string;
  /** A direct provider of the workspace; without it (and without a route), `own`. */
  provider?: string;
  /** A failover route of the workspace; exclusive with `provider`. */
  failoverRoute?: string;
  /**
   * A personalisation CSV (domain/personalization-csv.ts): its extra columns are each row's
   * variables for the body's {{name}} placeholders; its numbers are the recipients when none are
   * given.
   */
  variables?: string;
  /** When to send it: ISO 8601 with a time zone offset, 1 minute to 35 days ahead; unset: now. */
  sendAt?: string;
}

const NAME_MAX_CHARACTERS = 200;

const field = fieldsOf<NamedCampaignInput>();

/** The input field that carries each field of the REST request body. */
const INPUT_FIELD_OF_REST: Record<string, keyof NamedCampaignInput & string> = {
  recipients: 'recipients',
  message: 'body',
  message_purpose: 'purpose',
  sender_id: 'senderId',
  provider_slug: 'provider',
  routing_type: 'failoverRoute',
  failover_route_slug: 'failoverRoute',
  personalization: 'variables',
  send_at: 'sendAt',
};

/** Messages a refusal lists before it counts the rest (a CSV may miss a variable on 1,000 rows). */
const LISTED_MESSAGES = 10;

/** The send rules' messages, each led by the input field it is about: `<field>: <message>; ...`. */
function sendRuleRefusal(errors: FieldErrors): InputError {
  const parts: MessagePart[] = [];
  const all = Object.entries(errors).flatMap(([restField, messages]) =>
    messages.map((message) => ({ restField, message })),
  );
  for (const { restField, message } of all.slice(0, LISTED_MESSAGES)) {
    if (parts.length > 0) parts.push('; ');
    // A recipient by its 1-based line, as Quick Send tells it: `recipients.1` is line 2.
    const position = /^recipients\.(\d+)$/.exec(restField)?.[1];
    if (position !== undefined) {
      const told = message.replace(`The ${restField} field`, 'the number');
      parts.push(`Line ${Number(position) + 1} of `, field('recipients'), `: ${told}`);
      continue;
    }
    const name = INPUT_FIELD_OF_REST[restField.split('.')[0] ?? restField];
    parts.push(name ? field(name) : restField, `: ${message}`);
  }
  if (all.length > LISTED_MESSAGES) parts.push(`; and ${all.length - LISTED_MESSAGES} more`);
  return new InputError('validation_failed', parts);
}

/** The send rules' refusals (keyed by the REST body's fields) told in this use-case's fields. */
async function inInputTerms<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof HeraldError && !(error instanceof InputError) && error.fieldErrors)
      throw sendRuleRefusal(error.fieldErrors);
    throw error;
  }
}

/** The variables CSV read (undefined when none is given), or refused naming its field. */
function readVariables(text: string | undefined) {
  if (text === undefined || text.trim() === '') return undefined;
  const read = readPersonalizationCsv(text);
  if (!read.ok) throw invalid`${field('variables')} ${read.error}`;
  return read;
}

/** The recipients given, else the variables CSV's numbers. */
function recipientsOf(input: NamedCampaignInput, variables: ReturnType<typeof readVariables>) {
  const given = (input.recipients ?? []).map((item) => item.trim()).filter(Boolean);
  const recipients = given.length > 0 ? given : (variables?.recipients ?? []);
  if (recipients.length === 0) throw invalid`${field('recipients')} is required`;
  return recipients;
}

export interface PreviewedMessage {
  recipient: string;
  /** As sent: `{opt_out_url}` shown as a link of its real length. */
  text: string;
  segments: number;
}

/**
 * The first `count` messages as their recipients will get them, checked by the send's rules
 * (as `createNamedCampaign` refuses them); nothing is saved.
 */
export function previewNamedCampaign(
  deps: Pick<CommandDeps, 'publicUrl'>,
  input: NamedCampaignInput,
  count = 3,
): PreviewedMessage[] {
  const variables = readVariables(input.variables);
  const recipients = recipientsOf(input, variables);
  const body = requiredText(input.body, field('body'));
  const validation = validateSendRequest({
    recipients,
    message: body,
    personalization: variables?.personalization,
    message_purpose: optionalText(input.purpose),
  });
  if (!validation.ok) throw sendRuleRefusal(validation.errors);
  const request = validation.value;
  return request.recipients.slice(0, count).map((recipient) => {
    const text = renderOptOutLink(
      request.personalized?.get(recipient) ?? request.message,
      deps.publicUrl,
    );
    return { recipient, text, segments: countSegments(text).segments };
  });
}

export interface CreatedNamedCampaign<Dispatched> {
  workspace: Workspace;
  id: number;
  name: string;
  /** Recipients requested (a marketing send then leaves out opted-out numbers). */
  recipients: number;
  dispatched: Dispatched;
}

/** The campaign's audit line: written with its save, `dispatch_confirmed` once its start is. */
const createdAudit = (
  actor: Actor,
  name: string,
  recipients: number,
  sendAt: string | undefined,
): BatchAudit => ({
  actor,
  line: (campaignId) => ({
    action: 'campaign.created',
    target: `campaign #${campaignId}`,
    details: {
      name,
      recipients,
      dispatch_confirmed: false,
      ...(sendAt !== undefined && { scheduled_at: sendAt }),
    },
  }),
});

/**
 * Refuses with an InputError naming its input fields (each front end labels them); once saved
 * (commands/messaging/save-campaign.ts), the campaign is paused until `dispatch` starts its
 * workflow.
 */
export async function createNamedCampaign<Dispatched extends { confirmed: boolean }>(
  deps: Pick<CommandDeps, 'sql' | 'env' | 'publicUrl' | 'secret'>,
  actor: Actor,
  input: NamedCampaignInput,
  dispatch: (campaign: { workspace: Workspace; id: number }) => Promise<Dispatched>,
): Promise<CreatedNamedCampaign<Dispatched>> {
  const workspace = await findWorkspace(deps, input.workspace);
  const name = requiredText(input.name, field('name'));
  if (characters(name) > NAME_MAX_CHARACTERS)
    throw invalid`${field('name')} must be at most ${NAME_MAX_CHARACTERS} characters`;
  const variables = readVariables(input.variables);
  const recipients = recipientsOf(input, variables);
  const body = requiredText(input.body, field('body'));
  const provider = optionalText(input.provider);
  const failoverRoute = optionalText(input.failoverRoute);
  if (provider && failoverRoute)
    throw invalid`${field('provider')} and ${field('failoverRoute')} are exclusive`;

  const sendAt = optionalText(input.sendAt);
  const validation = validateSendRequest({
    recipients,
    message: body,
    personalization: variables?.personalization,
    message_purpose: optionalText(input.purpose),
    sender_id: optionalText(input.senderId),
    provider_slug: provider,
    ...(failoverRoute && { routing_type: 'failover', failover_route_slug: failoverRoute }),
    send_at: sendAt,
  });
  if (!validation.ok) throw sendRuleRefusal(validation.errors);
  const request = validation.value;
  const audit = createdAudit(actor, name, request.recipients.length, sendAt);
  // The window first, then the named targets, each refused by its own field.
  await inInputTerms(() => checkSchedule(request));
  if (provider) await checkProvider(deps, workspace, provider, field('provider'));
  if (failoverRoute)
    await checkFailoverRoute(deps, workspace, failoverRoute, field('failoverRoute'));
  const { id } = await inInputTerms(() =>
    saveCampaign(
      deps,
      { workspaceId: workspace.id, apiKey: null, source: 'campaign', name, idempotencyKey: null },
      request,
      { audit },
    ),
  );
  const dispatched = await dispatch({ workspace, id });
  if (dispatched.confirmed) await auditDispatchConfirmed(deps, workspace.id, audit.line(id));
  return { workspace, id, name, recipients: request.recipients.length, dispatched };
}
