import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { describe, expect, it } from 'vitest';
import { validationMessage } from '../../domain/errors.js';
import { isAustralianMobile, parseE164 } from '../../domain/phone.js';
import { validateSendRequest } from '../../domain/send-request.js';

const MOBILE = '+61412345678';
const base = { recipients: [MOBILE], message: 'Hello' };

function errorsFor(body: unknown) {
  const result = validateSendRequest(body);
  if (result.ok) throw new Error(`expected a validation failure, got ${JSON.stringify(result)}`);
  return result.errors;
}

function accepted(body: unknown) {
  const result = validateSendRequest(body);
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.errors)}`);
  return result.value;
}

/** 1,000 distinct Australian mobiles: +61410000000 … +61410000999. */
const thousandMobiles = Array.from(
  { length: 1000 },
  (_, i) => `+6141${String(i).padStart(7, '0')}`,
);

describe('parseE164', () => {
  it('accepts strict E.164 numbers that libphonenumber considers valid', () => {
    expect(parseE164(MOBILE)).toBe(MOBILE);
    expect(parseE164('+14155552671')).toBe('+14155552671');
    expect(parseE164('+447911123456')).toBe('+447911123456');
  });

  it('normalizes a trunk prefix written after the country code', () => {
    expect(parseE164('+610412345678')).toBe(MOBILE);
  });

  it('rejects anything else', () => {
    for (const value of [
      '61412345678',
      '0412345678',
      '+61 412 345 678',
      '+61-412-345-678',
      ` ${MOBILE}`,
      `${MOBILE};ext=1`,
      '+0412345678',
      '+1234567',
      '+1234567890123456',
      '+999123456789',
      '+6141000000',
      61412345678,
      null,
    ]) {
      expect(parseE164(value), String(value)).toBeUndefined();
    }
  });

  it('recognises Australian mobiles', () => {
    expect(isAustralianMobile(MOBILE)).toBe(true);
    expect(isAustralianMobile('+61299999999')).toBe(false);
    expect(isAustralianMobile('+447911123456')).toBe(false);
    expect(isAustralianMobile('+61 412 345 678')).toBe(false);
  });
});

describe('validateSendRequest: accepted bodies', () => {
  it('applies defaults', () => {
    expect(accepted(base)).toEqual({
      recipients: [MOBILE],
      message: 'Hello',
      messagePurpose: 'transactional',
      senderId: null,
      routingType: null,
      providerSlug: null,
      failoverRouteSlug: null,
      reference: null,
      sendAt: null,
      personalized: null,
    });
  });

  it('treats null optional fields as omitted and ignores unknown fields', () => {
    expect(
      accepted({
        ...base,
        message_purpose: null,
        sender_id: null,
        routing_type: null,
        provider_slug: null,
        failover_route_slug: null,
        reference: null,
        send_at: null,
        unknown: { anything: true },
      }),
    ).toEqual(accepted(base));
  });

  it('normalizes recipients', () => {
    expect(accepted({ ...base, recipients: ['+610412345678', '+14155552671'] }).recipients).toEqual(
      [MOBILE, '+14155552671'],
    );
  });

  it('accepts a marketing failover send with every field', () => {
    expect(
      accepted({
        recipients: [MOBILE],
        message: 'Sale! Opt out: {opt_out_url}',
        message_purpose: 'marketing',
        sender_id: 'Herald 2',
        routing_type: 'failover',
        failover_route_slug: 'au-primary_2',
        reference: 'order-42',
        send_at: '2026-12-01T09:00:00+10:00',
      }),
    ).toEqual({
      recipients: [MOBILE],
      message: 'Sale! Opt out: {opt_out_url}',
      messagePurpose: 'marketing',
      senderId: 'Herald 2',
      routingType: 'failover',
      providerSlug: null,
      failoverRouteSlug: 'au-primary_2',
      reference: 'order-42',
      sendAt: new Date('2026-11-30T23:00:00.000Z'),
      personalized: null,
    });
  });

  it('routes directly: explicitly, with or without a provider, and implied by a provider slug', () => {
    const direct = { routingType: 'direct', failoverRouteSlug: null };
    expect(accepted({ ...base, routing_type: 'direct' })).toMatchObject({
      ...direct,
      providerSlug: null,
    });
    expect(accepted({ ...base, routing_type: 'direct', provider_slug: 'own' })).toMatchObject({
      ...direct,
      providerSlug: 'own',
    });
    expect(accepted({ ...base, provider_slug: 'twilio' })).toMatchObject({
      ...direct,
      providerSlug: 'twilio',
    });
  });

  it('counts message and reference length in code points', () => {
    expect(accepted({ ...base, message: '😀'.repeat(1600) }).message).toHaveLength(3200);
    expect(accepted({ ...base, reference: '😀'.repeat(100) }).reference).toHaveLength(200);
  });

  it('accepts 1,000 distinct valid numbers', () => {
    expect(new Set(thousandMobiles).size).toBe(1000);
    expect(thousandMobiles.every((number) => isValidPhoneNumber(number))).toBe(true);
    expect(accepted({ ...base, recipients: thousandMobiles }).recipients).toEqual(thousandMobiles);
  });
});

describe('validateSendRequest: rejected bodies', () => {
  it('requires a JSON object body', () => {
    for (const body of [null, undefined, [], 'recipients', 42]) {
      expect(errorsFor(body)).toEqual({ body: ['The request body must be a JSON object.'] });
    }
  });

  it('requires recipients', () => {
    const required = { recipients: ['The recipients field is required.'] };
    expect(errorsFor({ message: 'Hello' })).toEqual(required);
    expect(errorsFor({ ...base, recipients: null })).toEqual(required);
    expect(errorsFor({ ...base, recipients: [] })).toEqual(required);
  });

  it('requires recipients to be an array', () => {
    expect(errorsFor({ ...base, recipients: MOBILE })).toEqual({
      recipients: ['The recipients field must be an array.'],
    });
  });

  it('rejects more than 1,000 recipients with the count message only', () => {
    const recipients = [...thousandMobiles, '+61411000000'];
    expect(errorsFor({ ...base, recipients })).toEqual({
      recipients: ['The recipients field must have between 1 and 1000 items.'],
    });
  });

  it('requires each recipient to be a string in valid E.164 form', () => {
    expect(
      errorsFor({
        ...base,
        recipients: [MOBILE, 61412345679, '0412345679', '+61 412 345 679', '+999123456789'],
      }),
    ).toEqual({
      'recipients.1': ['The recipients.1 field must be a string.'],
      'recipients.2': ['The recipients.2 field must be a valid E.164 phone number.'],
      'recipients.3': ['The recipients.3 field must be a valid E.164 phone number.'],
      'recipients.4': ['The recipients.4 field must be a valid E.164 phone number.'],
    });
  });

  it('rejects duplicate recipients at the duplicate, comparing normalized numbers', () => {
    expect(
      errorsFor({ ...base, recipients: [MOBILE, '+14155552671', '+610412345678', MOBILE] }),
    ).toEqual({
      'recipients.2': ['The recipients.2 field has a duplicate value.'],
      'recipients.3': ['The recipients.3 field has a duplicate value.'],
    });
  });

  it('requires a message', () => {
    const required = { message: ['The message field is required.'] };
    expect(errorsFor({ recipients: [MOBILE] })).toEqual(required);
    expect(errorsFor({ ...base, message: null })).toEqual(required);
    expect(errorsFor({ ...base, message: '' })).toEqual(required);
    expect(errorsFor({ ...base, message: ' \n ' })).toEqual(required);
  });

  it('requires the message to be a string', () => {
    expect(errorsFor({ ...base, message: ['Hello'] })).toEqual({
      message: ['The message field must be a string.'],
    });
  });

  it('limits the message to 1,600 characters', () => {
    expect(errorsFor({ ...base, message: 'a'.repeat(1601) })).toEqual({
      message: ['The message field must not be greater than 1600 characters.'],
    });
    expect(errorsFor({ ...base, message: '😀'.repeat(1601) })).toEqual({
      message: ['The message field must not be greater than 1600 characters.'],
    });
  });

  it('allows {opt_out_url} only in marketing messages', () => {
    expect(errorsFor({ ...base, message: 'Stop: {opt_out_url}' })).toEqual({
      message: [
        'The message field may only contain {opt_out_url} when the message purpose is marketing.',
      ],
    });
  });

  it('allows {opt_out_url} at most once', () => {
    expect(
      errorsFor({
        ...base,
        message_purpose: 'marketing',
        message: '{opt_out_url} and {opt_out_url}',
      }),
    ).toEqual({ message: ['The message field must not contain {opt_out_url} more than once.'] });
  });

  it('restricts message_purpose to its values', () => {
    expect(errorsFor({ ...base, message_purpose: 'promotional' })).toEqual({
      message_purpose: ['The selected message purpose is invalid.'],
    });
    expect(errorsFor({ ...base, message_purpose: 1 })).toEqual({
      message_purpose: ['The message purpose field must be a string.'],
    });
  });

  it('limits sender_id to 11 characters', () => {
    expect(errorsFor({ ...base, sender_id: 'HeraldAlerts' })).toEqual({
      sender_id: ['The sender id field must not be greater than 11 characters.'],
    });
  });

  it('limits sender_id to letters, digits and spaces', () => {
    expect(errorsFor({ ...base, sender_id: 'Herald-1' })).toEqual({
      sender_id: ['The sender id field must only contain letters, numbers, and spaces.'],
    });
    expect(errorsFor({ ...base, sender_id: 'Hérald' })).toEqual({
      sender_id: ['The sender id field must only contain letters, numbers, and spaces.'],
    });
  });

  it('rejects a blank sender_id', () => {
    for (const sender_id of ['', '   ']) {
      expect(errorsFor({ ...base, sender_id })).toEqual({
        sender_id: ['The sender id field must have a value.'],
      });
    }
  });

  it('requires sender_id to be a string', () => {
    expect(errorsFor({ ...base, sender_id: 12345 })).toEqual({
      sender_id: ['The sender id field must be a string.'],
    });
  });

  it('restricts routing_type to its values', () => {
    expect(errorsFor({ ...base, routing_type: 'broadcast' })).toEqual({
      routing_type: ['The selected routing type is invalid.'],
    });
  });

  it('checks the provider_slug format', () => {
    expect(errorsFor({ ...base, provider_slug: 'Twilio AU' })).toEqual({
      provider_slug: ['The provider slug field format is invalid.'],
    });
    expect(errorsFor({ ...base, provider_slug: 7 })).toEqual({
      provider_slug: ['The provider slug field must be a string.'],
    });
  });

  it('prohibits provider_slug with failover routing', () => {
    expect(
      errorsFor({
        ...base,
        routing_type: 'failover',
        provider_slug: 'own',
        failover_route_slug: 'main',
      }),
    ).toEqual({
      provider_slug: ['The provider slug field is prohibited when routing type is failover.'],
    });
  });

  it('requires failover_route_slug with failover routing', () => {
    expect(errorsFor({ ...base, routing_type: 'failover' })).toEqual({
      failover_route_slug: [
        'The failover route slug field is required when routing type is failover.',
      ],
    });
  });

  it('prohibits failover_route_slug with direct routing', () => {
    expect(errorsFor({ ...base, routing_type: 'direct', failover_route_slug: 'main' })).toEqual({
      failover_route_slug: [
        'The failover route slug field is prohibited when routing type is direct.',
      ],
    });
  });

  it('requires routing_type when failover_route_slug is given', () => {
    expect(errorsFor({ ...base, failover_route_slug: 'main' })).toEqual({
      routing_type: ['The routing type field is required when failover route slug is present.'],
    });
  });

  it('checks the failover_route_slug format', () => {
    expect(errorsFor({ ...base, routing_type: 'failover', failover_route_slug: '-main' })).toEqual({
      failover_route_slug: ['The failover route slug field format is invalid.'],
    });
  });

  it('limits reference to 100 characters', () => {
    expect(errorsFor({ ...base, reference: 'r'.repeat(101) })).toEqual({
      reference: ['The reference field must not be greater than 100 characters.'],
    });
  });

  it('requires reference to be a string', () => {
    expect(errorsFor({ ...base, reference: 42 })).toEqual({
      reference: ['The reference field must be a string.'],
    });
  });

  it('reports every failing field, in request field order', () => {
    const errors = errorsFor({
      reference: 5,
      routing_type: 'failover',
      sender_id: 'Too long sender',
      message_purpose: 'bulk',
      recipients: ['nope'],
    });
    expect(errors).toEqual({
      'recipients.0': ['The recipients.0 field must be a valid E.164 phone number.'],
      message: ['The message field is required.'],
      message_purpose: ['The selected message purpose is invalid.'],
      sender_id: ['The sender id field must not be greater than 11 characters.'],
      failover_route_slug: [
        'The failover route slug field is required when routing type is failover.',
      ],
      reference: ['The reference field must be a string.'],
    });
    expect(Object.keys(errors)).toEqual([
      'recipients.0',
      'message',
      'message_purpose',
      'sender_id',
      'failover_route_slug',
      'reference',
    ]);
    expect(validationMessage(errors)).toBe(
      'The recipients.0 field must be a valid E.164 phone number. (and 5 more errors)',
    );
  });
});
