/**
 * What the api logs holds no secret (issue 24 item 4): real flows through the console and the
 * REST API make a password, an API key, an invitation token, an opt-out token and an OTP code,
 * and use each one where a client would (a form, an Authorization header, the link's URL, a
 * verify body); every line the api logged, at trace level, is then searched for all of them.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { addCredits } from '../../commands/otp/credits.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { buildApp } from '../../server/app.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser } from '../support/console.js';
import { findSecretsInText, type LogSecret } from '../support/log-secrets.js';
import { inbox, numbers } from '../support/send.js';

const simulatorUrl = inject('simulatorUrl');
/** A send reaches the simulator through its workflow: seconds on a busy machine. */
const POLL = { timeout: 30_000, interval: 100 };

let logged = '';
let app: FastifyInstance;
let sql: Sql;
let closeTemporal: () => Promise<void>;

beforeAll(async () => {
  const publicUrl = 'http://herald.test';
  const env = parseEnv({ LOG_LEVEL: 'trace', PUBLIC_URL: publicUrl });
  sql = createSql(inject('databaseUrl'), { max: 4 });
  const temporal = await connectTemporalClient(inject('temporalAddress'), 'default');
  closeTemporal = () => temporal.connection.close();
  const logStream = {
    write(line: string) {
      logged += line;
    },
  };
  app = buildApp({ env, publicUrl, secret: inject('secret'), sql, temporal }, { logStream });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await closeTemporal?.();
  await sql?.end();
});

/** The text of the first message the simulator's phone `to` received that matches `pattern`. */
async function received(to: string, pattern: RegExp): Promise<string> {
  let match: RegExpExecArray | null = null;
  await expect
    .poll(async () => {
      const [message] = await inbox(simulatorUrl, to);
      match = pattern.exec(message?.body ?? '');
      return match !== null;
    }, POLL)
    .toBe(true);
  return (match as unknown as RegExpExecArray)[1] as string;
}

it('keeps every password, API key, invitation token, opt-out token and OTP code out of the log', async () => {
  const slug = `logs-${randomBytes(5).toString('hex')}`;
  await createWorkspace({ sql }, { name: `Logs ${slug}`, slug }, TEST_OPERATOR);
  await addCredits({ sql }, { workspace: slug, amount: 10 }, TEST_OPERATOR);
  const ownerPassword = `Owner ${randomBytes(9).toString('base64url')}`;
  const ownerEmail = `owner@${slug}.test`;
  await addUser(
    { sql },
    { workspace: slug, email: ownerEmail, password: ownerPassword, role: 'owner' },
    TEST_OPERATOR,
  );

  const owner = new ConsoleBrowser(app);
  expect((await owner.signIn(ownerEmail, ownerPassword)).status).toBe(303);

  await owner.get(`/console/w/${slug}/developer/api-keys`);
  const keyPage = await owner.post(`/console/w/${slug}/developer/api-keys`, {
    name: 'Logs',
    abilities: ['messages:send', 'otp:send', 'otp:verify'],
    routing: '',
  });
  expect(keyPage.status).toBe(201);
  const apiKey = /<code id="new-token">([^<]+)<\/code>/.exec(keyPage.body)?.[1] ?? '';
  expect(apiKey).toMatch(/^hld_/);

  await owner.get(`/console/w/${slug}/team`);
  const invited = await owner.post(`/console/w/${slug}/team/invitations`, {
    email: `invitee@${slug}.test`,
    role: 'admin',
  });
  expect(invited.status).toBe(201);
  const invitationPath = /<code id="invitation-link">http:\/\/herald\.test([^<]+)<\/code>/.exec(
    invited.body,
  )?.[1];
  const invitationToken = invitationPath?.split('/').pop() ?? '';
  expect(invitationToken).toMatch(/^hli_/);
  const invitee = new ConsoleBrowser(app);
  expect((await invitee.get(invitationPath as string)).status).toBe(200);
  const inviteePassword = `Invitee ${randomBytes(9).toString('base64url')}`;
  const joined = await invitee.post(invitationPath as string, {
    password: inviteePassword,
    password_confirmation: inviteePassword,
  });
  expect(joined.status).toBe(303);

  const api = (url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${apiKey}` }, payload });
  const [shopper, user] = numbers(2) as [string, string];
  const marketing = await api('/api/v1/messages', {
    recipients: [shopper],
    message: 'Sale today. Stop: {opt_out_url}',
    message_purpose: 'marketing',
  });
  expect(marketing.statusCode).toBe(202);
  const optOutToken = await received(shopper, /\/o\/([0-9A-Za-z]{10})/);
  expect((await app.inject({ method: 'GET', url: `/o/${optOutToken}` })).statusCode).toBe(200);
  expect((await app.inject({ method: 'POST', url: `/o/${optOutToken}` })).statusCode).toBe(200);

  const otp = await api('/api/v1/otp/send', { recipient: user, purpose: 'login' });
  expect(otp.statusCode).toBe(202);
  const code = await received(user, /(?<!\d)(\d{6})(?!\d)/);
  const verified = await api('/api/v1/otp/verify', {
    recipient: user,
    request_id: otp.json().data.request_id,
    code,
  });
  expect(verified.statusCode).toBe(200);

  const secrets: LogSecret[] = [
    { kind: 'owner password', value: ownerPassword },
    { kind: 'invitee password', value: inviteePassword },
    { kind: 'API key', value: apiKey },
    { kind: 'invitation token', value: invitationToken },
    { kind: 'opt-out token', value: optOutToken },
    { kind: 'OTP code', value: code },
  ];
  expect(findSecretsInText(logged, secrets, 'api log')).toEqual([]);
  // Not for want of logging: the requests with a secret in their path are there, redacted.
  expect(logged).toContain('"url":"/console/invitations/[redacted]"');
  expect(logged).toContain('"url":"/o/[redacted]"');
});
