/**
 * The Twilio adapter against the local Twilio-format peer (test/support/twilio-peer.ts), and
 * X-Twilio-Signature against the test vector of Twilio's security documentation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TwilioProvider } from '../../providers/twilio/adapter.js';
import { twilioSignature, verifyTwilioSignature } from '../../providers/twilio/signature.js';
import { signTwilio, startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';

/** https://www.twilio.com/docs/usage/security#validating-requests (AuthToken 12345). */
const VECTOR = {
  authToken: '12345',
  url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
  params: {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+12349013030',
    Digits: '1234',
    From: '+12349013030',
    To: '+18005551212',
  },
  signature: '0/KCTR6DLpKmkAf8muzZqo1nDgQ=',
};

const account = { accountSid: `AC${'0123456789abcdef'.repeat(2)}`, authToken: 'peer-auth-token-1' };
const credentials = { account_sid: account.accountSid, auth_token: account.authToken };
const CALLBACK = 'https://herald.example/webhooks/providers/tw';

describe('X-Twilio-Signature', () => {
  it("reproduces Twilio's documented test vector", () => {
    expect(twilioSignature(VECTOR.authToken, VECTOR.url, VECTOR.params)).toBe(VECTOR.signature);
    expect(signTwilio(VECTOR.authToken, VECTOR.url, VECTOR.params)).toBe(VECTOR.signature);
    expect(
      verifyTwilioSignature(VECTOR.authToken, VECTOR.signature, VECTOR.url, VECTOR.params),
    ).toBe(true);
  });

  it('refuses a changed parameter, URL, token or a missing header', () => {
    const { authToken, url, params, signature } = VECTOR;
    expect(verifyTwilioSignature(authToken, signature, url, { ...params, Digits: '1235' })).toBe(
      false,
    );
    expect(verifyTwilioSignature(authToken, signature, `${url}&x=1`, params)).toBe(false);
    expect(verifyTwilioSignature('54321', signature, url, params)).toBe(false);
    expect(verifyTwilioSignature(authToken, undefined, url, params)).toBe(false);
    expect(verifyTwilioSignature(authToken, 'short', url, params)).toBe(false);
  });

  it('accepts the URL with or without the default port, as Twilio may sign either', () => {
    const signed = twilioSignature('12345', 'https://mycompany.com:443/myapp.php?foo=1', {});
    expect(
      verifyTwilioSignature('12345', signed, 'https://mycompany.com/myapp.php?foo=1', {}),
    ).toBe(true);
  });
});

describe('TwilioProvider against the Twilio-format peer', () => {
  let peer: TwilioPeer;
  let provider: TwilioProvider;
  const message = (to: string, from: string | null = null) => ({
    to,
    from,
    body: 'Hello from Herald',
    reference: 'cmp-7-1',
    callbackUrl: CALLBACK,
  });

  beforeAll(async () => {
    peer = await startTwilioPeer(account);
    provider = new TwilioProvider('tw', {
      ...credentials,
      from: '+15005550006',
      base_url: peer.url,
      timeoutMs: 500,
    });
  });
  afterAll(() => peer.close());

  it('submits the documented request and maps 201 to accepted with the sid', async () => {
    const outcome = await provider.submit(message('+61400000001'));
    const [sent] = peer.messages.slice(-1);
    expect(outcome).toEqual({ kind: 'accepted', providerMessageId: sent?.sid });
    expect(sent).toEqual({
      sid: expect.stringMatching(/^SM[0-9a-f]{32}$/),
      accountSid: account.accountSid,
      to: '+61400000001',
      from: '+15005550006',
      messagingServiceSid: null,
      body: 'Hello from Herald',
      statusCallback: `${CALLBACK}?ref=cmp-7-1`,
      validityPeriod: null,
    });
    expect(peer.problems).toEqual([]);
  });

  it('passes the validity period as ValidityPeriod, capped at 36,000 s', async () => {
    await provider.submit({
      ...message('+61400000009'),
      validUntil: new Date(Date.now() + 600_000),
    });
    expect(peer.messages.at(-1)?.validityPeriod).toBeGreaterThanOrEqual(599);
    expect(peer.messages.at(-1)?.validityPeriod).toBeLessThanOrEqual(600);
    await provider.submit({
      ...message('+61400000010'),
      validUntil: new Date(Date.now() + 24 * 3_600_000),
    });
    expect(peer.messages.at(-1)?.validityPeriod).toBe(36_000);
    expect(peer.problems).toEqual([]);
  });

  it("sends the message's own sender id as From, and a MessagingServiceSid when configured", async () => {
    const viaService = new TwilioProvider('tw', {
      ...credentials,
      messaging_service_sid: `MG${'a'.repeat(32)}`,
      base_url: peer.url,
    });
    await viaService.submit(message('+61400000002'));
    expect(peer.messages.at(-1)).toMatchObject({
      from: null,
      messagingServiceSid: `MG${'a'.repeat(32)}`,
    });
    await provider.submit(message('+61400000003', 'Herald'));
    expect(peer.messages.at(-1)).toMatchObject({ from: 'Herald', messagingServiceSid: null });
    expect(peer.problems).toEqual([]);
  });

  it('maps Twilio 4xx errors to rejected, with the code and message', async () => {
    expect(await provider.submit(message('0400'))).toEqual({
      kind: 'rejected',
      reason: "Twilio error 21211: The 'To' number 0400 is not a valid phone number.",
    });
    peer.answer('+61400000012', {
      kind: 'error',
      status: 400,
      code: 21408,
      message: 'Permission to send an SMS has not been enabled for the region',
    });
    expect(await provider.submit(message('+61400000012'))).toEqual({
      kind: 'rejected',
      reason: 'Twilio error 21408: Permission to send an SMS has not been enabled for the region',
    });
    const wrongToken = new TwilioProvider('tw', {
      ...credentials,
      auth_token: 'not-the-token',
      from: '+15005550006',
      base_url: peer.url,
    });
    expect(await wrongToken.submit(message('+61400000011'))).toEqual({
      kind: 'rejected',
      reason: 'Twilio error 20003: Authenticate',
    });
  });

  it('maps 21610 (the recipient replied STOP) to a rejection that says the recipient opted out', async () => {
    peer.answer('+61400000013', {
      kind: 'error',
      status: 400,
      code: 21610,
      message: 'Attempt to send to unsubscribed recipient',
    });
    expect(await provider.submit(message('+61400000013'))).toEqual({
      kind: 'rejected',
      reason: 'Twilio error 21610: Attempt to send to unsubscribed recipient',
      optedOut: true,
    });
    expect(peer.createsTo('+61400000013')).toEqual([
      { to: '+61400000013', at: expect.any(Number), status: 400 },
    ]);
  });

  it('maps 500, 502, 503 and 504 on create to unknown, after exactly one request', async () => {
    const answers = [
      { to: '+61400000021', status: 500, code: 20500, message: 'Internal Server Error' },
      { to: '+61400000022', status: 502, code: 20502, message: 'Bad Gateway' },
      { to: '+61400000023', status: 503, code: 20503, message: 'Service Unavailable' },
      { to: '+61400000024', status: 504, code: 20504, message: 'Gateway Timeout' },
    ];
    for (const { to, status, code, message: text } of answers) {
      // Twilio may create the message and still answer a 5xx.
      peer.answer(to, { kind: 'error', status, code, message: text, created: true });
      expect(await provider.submit(message(to))).toEqual({
        kind: 'unknown',
        reason: `Twilio error ${code}: ${text}`,
      });
      expect(peer.createsTo(to).map((create) => create.status)).toEqual([status]);
      expect(peer.messages.filter((sent) => sent.to === to)).toHaveLength(1);
    }
    // A 503 with Retry-After from an edge proxy is no proof either.
    peer.answer('+61400000025', {
      kind: 'error',
      status: 503,
      code: 0,
      message: '',
      retryAfter: '5',
      html: '<html><body>503 Service Unavailable</body></html>',
    });
    expect(await provider.submit(message('+61400000025'))).toEqual({
      kind: 'unknown',
      reason: 'HTTP 503',
    });
  });

  it('maps 429 to failed, with Retry-After (seconds or an HTTP date) as retryAfterMs, capped at 60 s', async () => {
    const tooMany = {
      kind: 'error',
      status: 429,
      code: 20429,
      message: 'Too Many Requests',
    } as const;
    const reason = 'Twilio error 20429: Too Many Requests';
    peer.answer('+61400000040', tooMany);
    peer.answer('+61400000041', { ...tooMany, retryAfter: '2' });
    peer.answer('+61400000042', { ...tooMany, retryAfter: '3600' });
    peer.answer('+61400000043', {
      ...tooMany,
      retryAfter: new Date(Date.now() + 30_000).toUTCString(),
    });
    peer.answer('+61400000044', { ...tooMany, retryAfter: 'soon' });
    expect(await provider.submit(message('+61400000040'))).toEqual({ kind: 'failed', reason });
    expect(await provider.submit(message('+61400000041'))).toEqual({
      kind: 'failed',
      reason,
      retryAfterMs: 2_000,
    });
    expect(await provider.submit(message('+61400000042'))).toEqual({
      kind: 'failed',
      reason,
      retryAfterMs: 60_000,
    });
    const dated = await provider.submit(message('+61400000043'));
    expect(dated).toMatchObject({ kind: 'failed', reason });
    // An HTTP date has whole seconds: 29-30 s from now.
    expect(dated.kind === 'failed' && dated.retryAfterMs).toBeGreaterThanOrEqual(28_000);
    expect(dated.kind === 'failed' && dated.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(await provider.submit(message('+61400000044'))).toEqual({ kind: 'failed', reason });
  });

  it('maps 408 (the request never arrived whole) to failed', async () => {
    peer.answer('+61400000045', {
      kind: 'error',
      status: 408,
      code: 0,
      message: '',
      html: '<html><body>408 Request Timeout</body></html>',
    });
    expect(await provider.submit(message('+61400000045'))).toEqual({
      kind: 'failed',
      reason: 'HTTP 408',
    });
  });

  it('maps a refused connection to failed, and a timeout after sending to unknown', async () => {
    const closed = await startTwilioPeer(account);
    await closed.close();
    const unreachable = new TwilioProvider('tw', {
      ...credentials,
      from: '+15005550006',
      base_url: closed.url,
    });
    expect(await unreachable.submit(message('+61400000030'))).toEqual({
      kind: 'failed',
      reason: 'network: ECONNREFUSED',
    });
    peer.answer('+61400000031', { kind: 'hang' });
    expect(await provider.submit(message('+61400000031'))).toMatchObject({ kind: 'unknown' });
  });

  it('cannot look a submission up by reference: Twilio keeps none', () => {
    expect('lookup' in provider).toBe(false);
  });

  it("looks an accepted message's delivery status up by its sid, mapped as its status callbacks are", async () => {
    const earlierProblems = peer.problems.length;
    const submitted = await provider.submit(message('+61400000050'));
    const sid = submitted.kind === 'accepted' ? submitted.providerMessageId : '';
    const ask = () => provider.deliveryStatus({ providerMessageId: sid });
    expect(await ask()).toEqual({ kind: 'pending' });
    for (const [status, errorCode, expected] of [
      ['sending', undefined, { kind: 'pending' }],
      ['delivered', undefined, { kind: 'final', status: 'delivered', errorCode: null }],
      ['undelivered', 30003, { kind: 'final', status: 'undelivered', errorCode: '30003' }],
      ['canceled', undefined, { kind: 'final', status: 'unknown', errorCode: 'twilio:canceled' }],
    ] as const) {
      const before = Math.floor(Date.now() / 1000) * 1000;
      peer.setStatus(sid, status, errorCode);
      const answer = await ask();
      expect(answer).toEqual(
        expected.kind === 'final' ? { ...expected, at: expect.any(Date) } : expected,
      );
      // date_updated, to the second, stands for the status's time.
      if (answer.kind === 'final') expect(answer.at.getTime()).toBeGreaterThanOrEqual(before);
    }
    expect(await provider.deliveryStatus({ providerMessageId: `SM${'0'.repeat(32)}` })).toEqual({
      kind: 'not_found',
    });
    expect(peer.problems.slice(earlierProblems)).toEqual([]);
  });

  it('throws when Twilio does not answer a status lookup with the message', async () => {
    const wrongToken = new TwilioProvider('tw', {
      ...credentials,
      auth_token: 'wrong',
      from: '+15005550006',
      base_url: peer.url,
    });
    const sid = peer.messages[0]?.sid ?? '';
    await expect(wrongToken.deliveryStatus({ providerMessageId: sid })).rejects.toThrow(
      'status lookup failed: Twilio error 20003: Authenticate',
    );
  });
});

describe('TwilioProvider.parseReceipt (status callbacks)', () => {
  const provider = new TwilioProvider('tw', { ...credentials, from: '+15005550006' });
  const url = `${CALLBACK}?ref=cmp-7-1`;
  const callback = (params: Record<string, string>, signedUrl = url) => ({
    url,
    headers: { 'x-twilio-signature': signTwilio(account.authToken, signedUrl, params) },
    body: params,
  });
  const status = (MessageStatus: string, extra: Record<string, string> = {}) =>
    callback({ AccountSid: account.accountSid, MessageSid: 'SM1', MessageStatus, ...extra });

  it('maps delivered and read to delivered, at the time received', () => {
    for (const value of ['delivered', 'read']) {
      const before = Date.now();
      const parsed = provider.parseReceipt(status(value));
      expect(parsed).toEqual({
        kind: 'receipt',
        receipt: {
          providerMessageId: 'SM1',
          reference: 'cmp-7-1',
          status: 'delivered',
          errorCode: null,
          at: expect.any(Date),
        },
      });
      if (parsed.kind === 'receipt')
        expect(parsed.receipt.at.getTime()).toBeGreaterThanOrEqual(before);
    }
  });

  it('maps undelivered and failed to undelivered with the ErrorCode', () => {
    for (const value of ['undelivered', 'failed']) {
      expect(provider.parseReceipt(status(value, { ErrorCode: '30003' }))).toMatchObject({
        kind: 'receipt',
        receipt: { status: 'undelivered', errorCode: '30003' },
      });
    }
  });

  it('acknowledges statuses on the way (queued, sending, sent, accepted, scheduled) without a receipt', () => {
    for (const value of ['queued', 'sending', 'sent', 'accepted', 'scheduled'])
      expect(provider.parseReceipt(status(value))).toEqual({ kind: 'ignored' });
  });

  it('keeps any other status as unknown, with Twilio’s word for it', () => {
    expect(provider.parseReceipt(status('canceled'))).toMatchObject({
      kind: 'receipt',
      receipt: { status: 'unknown', errorCode: 'twilio:canceled' },
    });
  });

  it('is forbidden when the signature is missing, or made for another URL or token', () => {
    const params = { MessageSid: 'SM1', MessageStatus: 'delivered' };
    expect(provider.parseReceipt({ url, headers: {}, body: params })).toEqual({
      kind: 'forbidden',
    });
    expect(provider.parseReceipt(callback(params, `${CALLBACK}?ref=cmp-7-2`))).toEqual({
      kind: 'forbidden',
    });
    const forged = {
      url,
      headers: { 'x-twilio-signature': signTwilio('guess', url, params) },
      body: params,
    };
    expect(provider.parseReceipt(forged)).toEqual({ kind: 'forbidden' });
  });
});
