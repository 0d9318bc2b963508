/**
 * Issue 31 item 3: numbers inside a provider's error text masked as numbers are (domain/phone.ts),
 * and the error codes of the simulator, Twilio, SMPP and Herald in words (domain/error-codes.ts).
 */
import { describe, expect, it } from 'vitest';
import { receiptErrorCode, sendErrorCode } from '../../domain/error-codes.js';
import { numbersMaskedIn, textShown } from '../../domain/phone.js';

describe('numbers inside free text', () => {
  it.each([
    ['own: Destination +61412555011 rejected.', 'own: Destination •••• 5011 rejected.'],
    [
      "tw: Twilio error 21211: The 'To' number +15005550001 is not a valid phone number.",
      "tw: Twilio error 21211: The 'To' number •••• 0001 is not a valid phone number.",
    ],
    // An SMSC quotes the number without its +.
    ['no route to 61412555011 today', 'no route to •••• 5011 today'],
    // Codes, hex statuses and short digit runs are no numbers.
    [
      'smsc: ESME_RINVDSTADR (0x0000000B, invalid destination address)',
      'smsc: ESME_RINVDSTADR (0x0000000B, invalid destination address)',
    ],
    ['UNDELIV:012', 'UNDELIV:012'],
    ['30003', '30003'],
  ])('%s', (text, masked) => {
    expect(numbersMaskedIn(text)).toBe(masked);
    expect(textShown(text, false)).toBe(masked);
    expect(textShown(text, true)).toBe(text);
  });
});

describe('error codes in words', () => {
  it.each([
    [
      'own: Destination +61412555011 rejected.',
      'rejected',
      'the provider rejected the destination',
    ],
    [
      "tw: Twilio error 21211: The 'To' number +15005550001 is not valid",
      '21211',
      'the number is not a valid phone number',
    ],
    [
      'smsc: ESME_RINVDSTADR (0x0000000B, invalid destination address)',
      'ESME_RINVDSTADR',
      'invalid destination address',
    ],
    ['own: HTTP 400', 'HTTP 400', 'the provider answered HTTP 400'],
    ['own: outcome unknown: socket hang up', 'outcome_unknown', expect.any(String)],
    [
      'validity period ended before it could be submitted',
      'expired',
      'its validity period ended before it could be submitted',
    ],
  ])('send error %s', (stored, code, meaning) => {
    expect(sendErrorCode(stored)).toEqual({ code, meaning });
  });

  it('leaves an error it cannot read without a code', () => {
    expect(sendErrorCode('provider_rejected')).toBeUndefined();
  });

  it.each([
    ['EC_ABSENT', 'the handset was unreachable'],
    ['30003', 'the handset was unreachable'],
    ['UNDELIV:012', 'the network could not deliver it'],
    ['EXPIRED:000', 'its validity period ran out before delivery'],
    ['twilio:canceled', 'Twilio reported the status “canceled”'],
    ['SOMETHING', null],
  ])('receipt code %s', (code, meaning) => {
    expect(receiptErrorCode(code)).toEqual({ code, meaning });
  });
});
