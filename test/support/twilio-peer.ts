/**
 * A local stand-in for Twilio's Messages API, holding Herald to the request Twilio documents
 * (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource):
 * `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP basic auth AccountSid:AuthToken,
 * `application/x-www-form-urlencoded` with `To`, `From` and/or `MessagingServiceSid`, `Body`,
 * optional `StatusCallback`. It answers as Twilio does: 201 with the Message resource, or an error
 * status with Twilio's error body `{code, message, more_info, status}` (and `Retry-After` when
 * asked; a 5xx may come after the message was created, as Twilio's may). It counts every create
 * request it receives (`creates`), answered or not. A message's resource can be fetched by its
 * sid (`GET .../Messages/{Sid}.json`), with the status `setStatus` gave it, and the Account
 * resource (`GET /2010-04-01/Accounts/{AccountSid}.json`: 200 with the right basic auth, 401 with
 * Twilio's 20003 otherwise; each fetch counted in `accountFetches`). It also builds status
 * callbacks signed the way Twilio signs them (its own implementation of the algorithm, separate
 * from Herald's).
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface PeerMessage {
  sid: string;
  accountSid: string;
  to: string;
  from: string | null;
  messagingServiceSid: string | null;
  body: string;
  statusCallback: string | null;
  /** Seconds, when the request set ValidityPeriod. */
  validityPeriod: number | null;
}

/** How the peer answers a submission to a number: accept, or a Twilio error, optionally late. */
export type PeerAnswer =
  | { kind: 'accept'; delayMs?: number }
  | {
      kind: 'error';
      status: number;
      code: number;
      message: string;
      /** Sent as the `Retry-After` header (delay-seconds or an HTTP-date). */
      retryAfter?: string;
      /** The message is created (listed in `messages`) before the error is answered, as a 5xx may be. */
      created?: boolean;
      /** A body in place of Twilio's JSON error, as an edge proxy sends (text/html). */
      html?: string;
    }
  /** Holds the request without answering (a timeout after the request was sent). */
  | { kind: 'hang' };

/** A create request the peer received (well-formed or not), and the status it answered. */
export interface CreateRequest {
  to: string;
  /** Date.now() on arrival. */
  at: number;
  /** Null while unanswered (or held by `hang`). */
  status: number | null;
}

export interface SignedCallback {
  url: string;
  headers: Record<string, string>;
  /** Form-encoded body. */
  payload: string;
  params: Record<string, string>;
}

export interface TwilioPeer {
  url: string;
  /** Messages Twilio accepted, in order. */
  messages: PeerMessage[];
  /** Every request that broke the documented format (each also answered with an error). */
  problems: string[];
  /** Rejected or failed submissions, by destination. */
  refused: { to: string; code: number }[];
  /** Every create request, in order of arrival. */
  creates: CreateRequest[];
  /** Create requests to one number, in order of arrival. */
  createsTo(to: string): CreateRequest[];
  /** Fetches of the Account resource, in order, and whether each carried the right basic auth. */
  accountFetches: { authorized: boolean }[];
  /** How the peer answers every later submission to `to` (after any `answerNext`). */
  answer(to: string, answer: PeerAnswer): void;
  /** Answers for the next submissions to `to`, one each, before its standing `answer` applies. */
  answerNext(to: string, ...answers: PeerAnswer[]): void;
  /**
   * Sets the status a fetch of the message's resource answers
   * (https://www.twilio.com/docs/messaging/api/message-resource#fetch-a-message-resource);
   * `queued` (or `accepted` through a Messaging Service) from its creation.
   */
  setStatus(sid: string, status: string, errorCode?: number): void;
  /** A status callback for a message, signed with the AuthToken as Twilio does. */
  statusCallback(sid: string, status: string, extra?: Record<string, string>): SignedCallback;
  close(): Promise<void>;
}

/** Twilio's request-signing algorithm, written independently of providers/twilio/signature.ts. */
export function signTwilio(authToken: string, url: string, params: Record<string, string>) {
  const data = Object.keys(params)
    .sort()
    .reduce((text, key) => text + key + params[key], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

const E164 = /^\+[1-9]\d{1,14}$/;
const KNOWN_FIELDS = new Set([
  'To',
  'From',
  'MessagingServiceSid',
  'Body',
  'StatusCallback',
  'ValidityPeriod',
]);

function twilioError(status: number, code: number, message: string) {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

export async function startTwilioPeer(account: {
  accountSid: string;
  authToken: string;
}): Promise<TwilioPeer> {
  const messages: PeerMessage[] = [];
  const problems: string[] = [];
  const refused: { to: string; code: number }[] = [];
  const creates: CreateRequest[] = [];
  const accountFetches: { authorized: boolean }[] = [];
  const answers = new Map<string, PeerAnswer>();
  const nextAnswers = new Map<string, PeerAnswer[]>();
  const hanging = new Set<http.ServerResponse>();
  const statuses = new Map<string, { status: string; errorCode: number | null; at: Date }>();
  /** Twilio's dates: RFC 2822 in GMT. */
  const rfc2822 = (at: Date) => at.toUTCString().replace('GMT', '+0000');

  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');

    const path = `/2010-04-01/Accounts/${account.accountSid}/Messages.json`;
    const create: CreateRequest | null =
      request.method === 'POST' && request.url === path
        ? { to: new URLSearchParams(text).get('To') ?? '', at: Date.now(), status: null }
        : null;
    if (create) creates.push(create);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (create) create.status = status;
      const html = typeof body === 'string';
      response.writeHead(status, {
        'content-type': html ? 'text/html' : 'application/json',
        ...headers,
      });
      response.end(html ? body : JSON.stringify(body));
    };
    const expectedAuth = `Basic ${Buffer.from(`${account.accountSid}:${account.authToken}`).toString('base64')}`;
    const fetched = new RegExp(`^${path.replace('.json', '')}/(SM[0-9a-f]{32})\\.json$`).exec(
      request.url ?? '',
    );
    if (
      request.method === 'GET' &&
      request.url === `/2010-04-01/Accounts/${account.accountSid}.json`
    ) {
      const authorized = request.headers.authorization === expectedAuth;
      accountFetches.push({ authorized });
      // A wrong token is what a connection test is for: answered as Twilio does, not a problem.
      if (!authorized) return send(401, twilioError(401, 20003, 'Authenticate'));
      return send(200, {
        sid: account.accountSid,
        friendly_name: 'Twilio peer',
        status: 'active',
        type: 'Full',
        uri: `/2010-04-01/Accounts/${account.accountSid}.json`,
      });
    }
    if (request.method === 'GET' && fetched) {
      if (request.headers.authorization !== expectedAuth) {
        problems.push('basic auth does not match AccountSid:AuthToken');
        return send(401, twilioError(401, 20003, 'Authenticate'));
      }
      const message = messages.find((candidate) => candidate.sid === fetched[1]);
      const state = statuses.get(fetched[1] as string);
      if (!message || !state)
        return send(404, twilioError(404, 20404, 'The requested resource was not found'));
      return send(200, {
        account_sid: account.accountSid,
        sid: message.sid,
        to: message.to,
        from: message.from,
        status: state.status,
        error_code: state.errorCode,
        error_message: null,
        date_updated: rfc2822(state.at),
      });
    }
    if (!create) {
      problems.push(`${request.method} ${request.url}`);
      return send(404, twilioError(404, 20404, 'The requested resource was not found'));
    }
    if (request.headers.authorization !== expectedAuth) {
      problems.push('basic auth does not match AccountSid:AuthToken');
      return send(401, twilioError(401, 20003, 'Authenticate'));
    }
    const contentType = request.headers['content-type'] ?? '';
    if (!contentType.startsWith('application/x-www-form-urlencoded')) {
      problems.push(`content-type ${contentType}`);
      return send(400, twilioError(400, 20001, 'Unsupported content type'));
    }
    const form = new URLSearchParams(text);
    for (const key of form.keys()) {
      if (!KNOWN_FIELDS.has(key)) problems.push(`unexpected field ${key}`);
      if (form.getAll(key).length > 1) problems.push(`repeated field ${key}`);
    }
    const to = form.get('To') ?? '';
    const from = form.get('From');
    const messagingServiceSid = form.get('MessagingServiceSid');
    const body = form.get('Body');
    const statusCallback = form.get('StatusCallback');
    const validityPeriod = form.get('ValidityPeriod');
    if (validityPeriod !== null && !/^\d+$/.test(validityPeriod)) {
      problems.push(`ValidityPeriod ${validityPeriod}`);
    } else if (
      validityPeriod !== null &&
      !(Number(validityPeriod) >= 1 && Number(validityPeriod) <= 36_000)
    ) {
      problems.push(`ValidityPeriod ${validityPeriod} outside 1-36000`);
    }
    if (!E164.test(to))
      return send(
        400,
        twilioError(400, 21211, `The 'To' number ${to} is not a valid phone number.`),
      );
    if (!from && !messagingServiceSid)
      return send(400, twilioError(400, 21603, "A 'From' phone number is required."));
    if (!body) return send(400, twilioError(400, 21602, 'Message body is required.'));
    if (statusCallback !== null && !/^https?:\/\//.test(statusCallback)) {
      problems.push(`StatusCallback ${statusCallback}`);
      return send(400, twilioError(400, 21609, 'Invalid StatusCallback'));
    }

    const answer = nextAnswers.get(to)?.shift() ?? answers.get(to) ?? { kind: 'accept' };
    if (answer.kind === 'hang') {
      hanging.add(response);
      return;
    }
    const created = () => {
      const sid = `SM${randomBytes(16).toString('hex')}`;
      messages.push({
        sid,
        accountSid: account.accountSid,
        to,
        from,
        messagingServiceSid,
        body,
        statusCallback,
        validityPeriod: validityPeriod === null ? null : Number(validityPeriod),
      });
      const status = messagingServiceSid ? 'accepted' : 'queued';
      statuses.set(sid, { status, errorCode: null, at: new Date() });
      return sid;
    };
    if (answer.kind === 'error') {
      if (answer.created) created();
      refused.push({ to, code: answer.code });
      return send(
        answer.status,
        answer.html ?? twilioError(answer.status, answer.code, answer.message),
        answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter },
      );
    }
    if (answer.delayMs) await sleep(answer.delayMs);
    const sid = created();
    const now = rfc2822(new Date());
    send(201, {
      account_sid: account.accountSid,
      api_version: '2010-04-01',
      body,
      date_created: now,
      date_sent: null,
      date_updated: now,
      direction: 'outbound-api',
      error_code: null,
      error_message: null,
      from,
      messaging_service_sid: messagingServiceSid,
      num_media: '0',
      num_segments: '1',
      price: null,
      price_unit: 'USD',
      sid,
      status: messagingServiceSid ? 'accepted' : 'queued',
      subresource_uris: { media: `${path.replace('.json', '')}/${sid}/Media.json` },
      to,
      uri: `${path.replace('.json', '')}/${sid}.json`,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    problems,
    refused,
    creates,
    createsTo: (to) => creates.filter((create) => create.to === to),
    accountFetches,
    answer(to, answer) {
      answers.set(to, answer);
    },
    answerNext(to, ...list) {
      nextAnswers.set(to, [...(nextAnswers.get(to) ?? []), ...list]);
    },
    setStatus(sid, status, errorCode) {
      statuses.set(sid, { status, errorCode: errorCode ?? null, at: new Date() });
    },
    statusCallback(sid, status, extra = {}) {
      const message = messages.find((candidate) => candidate.sid === sid);
      if (!message?.statusCallback) throw new Error(`no StatusCallback for ${sid}`);
      // The parameters Twilio posts with a message status callback.
      const params: Record<string, string> = {
        AccountSid: message.accountSid,
        ApiVersion: '2010-04-01',
        From: message.from ?? '',
        MessageSid: sid,
        MessageStatus: status,
        SmsSid: sid,
        SmsStatus: status,
        To: message.to,
        ...(message.messagingServiceSid
          ? { MessagingServiceSid: message.messagingServiceSid }
          : {}),
        ...extra,
      };
      return {
        url: message.statusCallback,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signTwilio(account.authToken, message.statusCallback, params),
          'i-twilio-idempotency-token': randomBytes(16).toString('hex'),
        },
        payload: new URLSearchParams(params).toString(),
        params,
      };
    },
    async close() {
      for (const response of hanging) response.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
