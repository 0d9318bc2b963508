/**
 * Validation of the send-SMS request body (SPEC §4.1, §8), with Laravel-style messages keyed by
 * request field (dot paths for recipients). Pure: whether a provider or route exists, or needs a
 * sender id, is checked later against the database.
 */
import type { FieldErrors } from './errors.js';
import { parseE164 } from './phone.js';
import {
  characters,
  checkEnum,
  checkSlug,
  collector,
  type Fail,
  isJsonObject,
  isOmitted,
  isOneOf,
  label,
  mustBeString,
  NOT_AN_OBJECT,
  optionalString,
  required,
  tooLong,
} from './validation.js';

export const MESSAGE_PURPOSES = ['transactional', 'marketing'] as const;
export type MessagePurpose = (typeof MESSAGE_PURPOSES)[number];

export const ROUTING_TYPES = ['direct', 'failover'] as const;
export type RoutingType = (typeof ROUTING_TYPES)[number];

export const MAX_RECIPIENTS = 1000;
export const MAX_MESSAGE_LENGTH = 1600;
export const MAX_SENDER_ID_LENGTH = 11;
export const MAX_REFERENCE_LENGTH = 100;
export const OPT_OUT_PLACEHOLDER = '{opt_out_url}';

const SENDER_ID_CHARS = /^[A-Za-z0-9 ]*$/;

export interface SendRequest {
  /** Normalized E.164, distinct, in request order. */
  recipients: string[];
  message: string;
  messagePurpose: MessagePurpose;
  senderId: string | null;
  /** Null when no routing field was given: the API key's routing applies. */
  routingType: RoutingType | null;
  providerSlug: string | null;
  failoverRouteSlug: string | null;
  reference: string | null;
}

export type SendRequestValidation =
  | { ok: true; value: SendRequest }
  | { ok: false; errors: FieldErrors };

export function validateSendRequest(body: unknown): SendRequestValidation {
  if (!isJsonObject(body)) return { ok: false, errors: NOT_AN_OBJECT };
  const input = body;
  const { errors, fail } = collector();

  const recipients = checkRecipients(input.recipients, fail);
  const purposeGiven = isOmitted(input.message_purpose) ? 'transactional' : input.message_purpose;
  const knownPurpose = isOneOf(purposeGiven, MESSAGE_PURPOSES) ? purposeGiven : undefined;
  const message = checkMessage(input.message, knownPurpose, fail);
  const messagePurpose = checkEnum(
    'message_purpose',
    input.message_purpose,
    MESSAGE_PURPOSES,
    fail,
  );
  const senderId = checkSenderId(input.sender_id, fail);
  const routing = checkRouting(input, fail);
  const reference = optionalString('reference', input.reference, fail);
  if (reference !== null && characters(reference) > MAX_REFERENCE_LENGTH) {
    fail('reference', tooLong('reference', MAX_REFERENCE_LENGTH));
  }

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      recipients,
      message,
      messagePurpose: messagePurpose ?? 'transactional',
      senderId,
      ...routing,
      reference,
    },
  };
}

function checkRecipients(value: unknown, fail: Fail): string[] {
  const key = 'recipients';
  const numbers: string[] = [];
  // Laravel's `required` also rejects an empty array, before any size rule runs.
  if (isOmitted(value) || (Array.isArray(value) && value.length === 0)) fail(key, required(key));
  else if (!Array.isArray(value)) fail(key, `The ${key} field must be an array.`);
  else if (value.length > MAX_RECIPIENTS) {
    fail(key, `The ${key} field must have between 1 and ${MAX_RECIPIENTS} items.`);
  } else {
    const seen = new Set<string>();
    for (const [index, item] of value.entries()) {
      const itemKey = `${key}.${index}`;
      const number = parseE164(item);
      if (typeof item !== 'string') fail(itemKey, mustBeString(itemKey));
      else if (number === undefined) {
        fail(itemKey, `The ${itemKey} field must be a valid E.164 phone number.`);
      } else if (seen.has(number)) {
        // Compared after normalization; the first occurrence stands, later ones are reported.
        fail(itemKey, `The ${itemKey} field has a duplicate value.`);
      } else {
        seen.add(number);
        numbers.push(number);
      }
    }
  }
  return numbers;
}

/** `purpose` is undefined when message_purpose itself is invalid (reported there). */
function checkMessage(value: unknown, purpose: MessagePurpose | undefined, fail: Fail): string {
  const key = 'message';
  if (typeof value !== 'string') {
    fail(key, isOmitted(value) ? required(key) : mustBeString(key));
    return '';
  }
  // Laravel's `required` fails on a blank string too.
  if (value.trim() === '') {
    fail(key, required(key));
    return value;
  }
  if (characters(value) > MAX_MESSAGE_LENGTH) fail(key, tooLong(key, MAX_MESSAGE_LENGTH));
  const placeholders = value.split(OPT_OUT_PLACEHOLDER).length - 1;
  if (placeholders > 0 && purpose === 'transactional') {
    fail(
      key,
      `The ${key} field may only contain ${OPT_OUT_PLACEHOLDER} when the message purpose is marketing.`,
    );
  } else if (placeholders > 1) {
    fail(key, `The ${key} field must not contain ${OPT_OUT_PLACEHOLDER} more than once.`);
  }
  return value;
}

function checkSenderId(value: unknown, fail: Fail): string | null {
  const key = 'sender_id';
  const senderId = optionalString(key, value, fail);
  if (senderId === null) return null;
  if (senderId.trim() === '') {
    fail(key, `The ${label(key)} field must have a value.`);
    return null;
  }
  if (characters(senderId) > MAX_SENDER_ID_LENGTH) fail(key, tooLong(key, MAX_SENDER_ID_LENGTH));
  if (!SENDER_ID_CHARS.test(senderId)) {
    fail(key, `The ${label(key)} field must only contain letters, numbers, and spaces.`);
  }
  return senderId;
}

type Routing = Pick<SendRequest, 'routingType' | 'providerSlug' | 'failoverRouteSlug'>;

function checkRouting(input: Record<string, unknown>, fail: Fail): Routing {
  const {
    routing_type: rawType,
    provider_slug: rawProvider,
    failover_route_slug: rawRoute,
  } = input;
  let routingType = checkEnum('routing_type', rawType, ROUTING_TYPES, fail);
  if (isOmitted(rawType) && !isOmitted(rawRoute)) {
    fail('routing_type', 'The routing type field is required when failover route slug is present.');
  }

  let providerSlug: string | null = null;
  if (!isOmitted(rawProvider) && routingType === 'failover') {
    fail('provider_slug', 'The provider slug field is prohibited when routing type is failover.');
  } else providerSlug = checkSlug('provider_slug', rawProvider, fail);

  let failoverRouteSlug: string | null = null;
  if (isOmitted(rawRoute) && routingType === 'failover') {
    fail(
      'failover_route_slug',
      'The failover route slug field is required when routing type is failover.',
    );
  } else if (!isOmitted(rawRoute) && routingType === 'direct') {
    fail(
      'failover_route_slug',
      'The failover route slug field is prohibited when routing type is direct.',
    );
  } else failoverRouteSlug = checkSlug('failover_route_slug', rawRoute, fail);

  // A provider slug on its own means direct routing to that provider.
  if (isOmitted(rawType) && providerSlug !== null) routingType = 'direct';
  return { routingType, providerSlug, failoverRouteSlug };
}
