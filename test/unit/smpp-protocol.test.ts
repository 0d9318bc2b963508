/**
 * SMPP 3.4 rules (providers/smpp/protocol.ts): command_status classes, addresses, the receipt
 * text of Appendix B and its TLVs, and telling receipts from replies in a deliver_sm.
 */
import { describe, expect, it } from 'vitest';
import {
  describeStatus,
  e164Of,
  parseDeliverSm,
  parseReceiptDate,
  parseReceiptText,
  receiptErrorCode,
  receiptOutcome,
  smppAddress,
  statusClass,
} from '../../providers/smpp/protocol.js';

describe('command_status', () => {
  it('backs off on throttling, rebinds on ESME_RINVBNDSTS, and splits the rest into permanent and transient', () => {
    const table = Object.fromEntries(
      [0x58, 0x14, 0x04, 0x0b, 0x0a, 0x01, 0x43, 0x45, 0x08, 0x64, 0x65, 0xff, 0x400].map(
        (status) => [status.toString(16), statusClass(status)],
      ),
    );
    expect(table).toEqual({
      '58': 'throttled', // ESME_RTHROTTLED
      '14': 'throttled', // ESME_RMSGQFUL
      '4': 'rebind', // ESME_RINVBNDSTS
      b: 'rejected', // ESME_RINVDSTADR
      a: 'rejected', // ESME_RINVSRCADR
      '1': 'rejected', // ESME_RINVMSGLEN
      '43': 'rejected', // ESME_RINVESMCLASS
      '45': 'failed', // ESME_RSUBMITFAIL
      '8': 'failed', // ESME_RSYSERR
      '64': 'failed', // ESME_RX_T_APPN
      '65': 'rejected', // ESME_RX_P_APPN
      ff: 'failed', // ESME_RUNKNOWNERR
      '400': 'failed', // vendor-specific: nothing was accepted, so a retry is harmless
    });
  });

  it('names a status, its code and its meaning', () => {
    expect(describeStatus(0x0b)).toBe('ESME_RINVDSTADR (0x0000000B, invalid destination address)');
    expect(describeStatus(0x58)).toBe(
      'ESME_RTHROTTLED (0x00000058, throttling error: the ESME exceeded its message limits)',
    );
    expect(describeStatus(0x401)).toBe('command_status 0x00000401');
  });
});

describe('addresses', () => {
  it('sends E.164 numbers as international/ISDN without the plus, names as alphanumeric', () => {
    expect(smppAddress('+61412345678')).toEqual({ ton: 1, npi: 1, addr: '61412345678' });
    expect(smppAddress('ACME Co')).toEqual({ ton: 5, npi: 0, addr: 'ACME Co' });
    expect(smppAddress('Herald')).toEqual({ ton: 5, npi: 0, addr: 'Herald' });
    expect(smppAddress('1234')).toEqual({ ton: 3, npi: 0, addr: '1234' });
    expect(smppAddress('61412345678')).toEqual({ ton: 1, npi: 1, addr: '61412345678' });
    expect(smppAddress('0412345678')).toEqual({ ton: 0, npi: 1, addr: '0412345678' });
    expect(smppAddress(null)).toEqual({ ton: 0, npi: 0, addr: '' });
  });

  it('reads an SMSC address back as E.164 when it is an international number', () => {
    expect(e164Of({ ton: 1, addr: '61412345678' })).toBe('+61412345678');
    expect(e164Of({ ton: 0, addr: '61412345678' })).toBe('+61412345678');
    expect(e164Of({ ton: 1, addr: '+61412345678' })).toBe('+61412345678');
    expect(e164Of({ ton: 2, addr: '0412345678' })).toBe('0412345678');
    expect(e164Of({ ton: 0, addr: '0412345678' })).toBe('0412345678');
    expect(e164Of({ ton: 3, addr: '1234' })).toBe('1234');
  });
});

describe('receipt text (SMPP 3.4 Appendix B)', () => {
  it('reads every field, the text last', () => {
    expect(
      parseReceiptText(
        'id:0A1B2C3D sub:001 dlvrd:001 submit date:2401311159 done date:2402010003 stat:DELIVRD err:000 text:Hello id:x stat:FAKE',
      ),
    ).toEqual({
      id: '0A1B2C3D',
      sub: '001',
      dlvrd: '001',
      submitDate: '2401311159',
      doneDate: '2402010003',
      stat: 'DELIVRD',
      err: '000',
      text: 'Hello id:x stat:FAKE',
    });
  });

  it('takes the field names in any case and leaves missing fields null', () => {
    expect(parseReceiptText('Id:77 Stat:UNDELIV Err:012')).toEqual({
      id: '77',
      sub: null,
      dlvrd: null,
      submitDate: null,
      doneDate: null,
      stat: 'UNDELIV',
      err: '012',
      text: null,
    });
  });

  it('reads done dates as UTC, with or without seconds, and refuses impossible ones', () => {
    expect(parseReceiptDate('2402291805')).toEqual(new Date('2024-02-29T18:05:00Z'));
    expect(parseReceiptDate('240229180559')).toEqual(new Date('2024-02-29T18:05:59Z'));
    expect(parseReceiptDate('2302291805')).toBeNull();
    expect(parseReceiptDate('2401012460')).toBeNull();
    expect(parseReceiptDate('24010118')).toBeNull();
    expect(parseReceiptDate(null)).toBeNull();
  });

  it('maps stat to delivered, undelivered, ignored, or unknown for anything else', () => {
    const stats = ['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'DELETED', 'ACCEPTD', 'ENROUTE'];
    expect(stats.map(receiptOutcome)).toEqual([
      'delivered',
      'undelivered',
      'undelivered',
      'undelivered',
      'undelivered',
      'ignored',
      'ignored',
    ]);
    expect(['UNKNOWN', 'FOOBAR', 'delivrd'].map(receiptOutcome)).toEqual([
      'unknown',
      'unknown',
      'delivered',
    ]);
  });

  it('keeps the stat and err as the error code', () => {
    expect(receiptErrorCode('UNDELIV', '012')).toBe('UNDELIV:012');
    expect(receiptErrorCode('EXPIRED', null)).toBe('EXPIRED');
  });
});

describe('deliver_sm', () => {
  const receiptText =
    'id:55 sub:001 dlvrd:000 submit date:2401010000 done date:2401010101 stat:UNDELIV err:034 text:Hi';

  it('reads a receipt from its text', () => {
    expect(
      parseDeliverSm({
        esm_class: 0x04,
        data_coding: 0,
        short_message: Buffer.from(receiptText, 'latin1'),
      }),
    ).toEqual({
      kind: 'receipt',
      providerMessageId: '55',
      outcome: 'undelivered',
      stat: 'UNDELIV',
      err: '034',
      doneAt: new Date('2024-01-01T01:01:00Z'),
    });
  });

  it('reads the text the smpp package decoded as GSM 03.38 back as ASCII', () => {
    // The package turns the octets 5F and 40 of "ab_c@d" into § and ¡.
    expect(
      parseDeliverSm({
        esm_class: 0x04,
        data_coding: 0,
        short_message: { message: 'id:ab§c¡d stat:DELIVRD' },
      }),
    ).toMatchObject({ providerMessageId: 'ab_c@d', outcome: 'delivered' });
  });

  it('prefers the receipted_message_id, message_state and network_error_code TLVs', () => {
    expect(
      parseDeliverSm({
        esm_class: 0x04,
        data_coding: 0,
        short_message: Buffer.alloc(0),
        receipted_message_id: 'abc-1',
        message_state: 3,
        network_error_code: Buffer.from([0x03, 0x00, 0x22]),
      }),
    ).toEqual({
      kind: 'receipt',
      providerMessageId: 'abc-1',
      outcome: 'undelivered',
      stat: 'EXPIRED',
      err: '3:34',
      doneAt: null,
    });
    expect(
      parseDeliverSm({
        esm_class: 0x04,
        short_message: Buffer.from(receiptText, 'latin1'),
        receipted_message_id: 'X9',
        message_state: 2,
      }),
    ).toMatchObject({ providerMessageId: 'X9', outcome: 'delivered', stat: 'DELIVRD', err: '034' });
  });

  it('keeps a state it cannot map as unknown', () => {
    expect(
      parseDeliverSm({ esm_class: 0x04, short_message: Buffer.from('id:9 stat:WEIRD err:001') }),
    ).toMatchObject({ outcome: 'unknown', stat: 'WEIRD', err: '001' });
    expect(
      parseDeliverSm({ esm_class: 0x04, receipted_message_id: '9', message_state: 7 }),
    ).toMatchObject({ outcome: 'unknown', stat: 'UNKNOWN' });
  });

  it('cannot use a receipt without an id or a state', () => {
    expect(parseDeliverSm({ esm_class: 0x04, short_message: Buffer.from('stat:DELIVRD') })).toEqual(
      { kind: 'unusable', reason: 'a receipt without a message id' },
    );
    expect(parseDeliverSm({ esm_class: 0x04, short_message: Buffer.from('id:4') })).toEqual({
      kind: 'unusable',
      reason: 'the receipt for 4 has no state',
    });
  });

  it('takes a deliver_sm without message type bits as a reply from the handset', () => {
    expect(
      parseDeliverSm({
        esm_class: 0,
        data_coding: 0,
        source_addr_ton: 1,
        source_addr: '61412345678',
        destination_addr: 'Herald',
        short_message: { message: 'STOP' },
      }),
    ).toEqual({ kind: 'reply', from: '+61412345678', to: 'Herald', body: 'STOP' });
    expect(
      parseDeliverSm({
        esm_class: 0,
        data_coding: 8,
        source_addr_ton: 1,
        source_addr: '61412345678',
        short_message: Buffer.from('Stop', 'utf16le').swap16(),
      }),
    ).toMatchObject({ kind: 'reply', body: 'Stop' });
  });

  it('answers, without recording, SME acknowledgements', () => {
    expect(parseDeliverSm({ esm_class: 0x08 })).toEqual({
      kind: 'unusable',
      reason: 'esm_class 0x8',
    });
  });
});
