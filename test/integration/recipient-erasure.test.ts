/**
 * `herald recipient erase` against the real stack: a number that was sent SMS (marketing, with its
 * opt-out link) and an OTP, failed a verification, replied STOP, and is quoted in webhook events,
 * idempotency records and the audit log, is erased from one workspace and then from all; afterwards
 * no text, varchar or json column of any table holds it (with its + or without), every report reads
 * as before, its opt-out is still honoured as a keyed hash, and a second erase changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN_COMMANDS } from '../../cli/admin/index.js';
import type { Options } from '../../cli/admin/options.js';
import { providerCreate } from '../../cli/admin/providers.js';
import { userCreate } from '../../cli/admin/users.js';
import { webhookCreate } from '../../cli/admin/webhooks.js';
import { runAsOperator } from '../../cli/context.js';
import { UsageError } from '../../cli/output.js';
import { recordAudit } from '../../commands/audit.js';
import { addCredits } from '../../db/credits.js';
import { maskedNumber } from '../../domain/phone.js';
import { erasedRecipient } from '../../security/recipient-hash.js';
import { ConsoleBrowser, visibleText } from '../support/console.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';
import { columnsHolding, everyReport } from '../support/reports.js';
import { dispatchPrepared, inbox, numbers, waitForCompletion } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';
import { signTwilio } from '../support/twilio-peer.js';

const secret = inject('secret');
const simulatorUrl = inject('simulatorUrl');
const ACCOUNT_SID = `AC${'7e'.repeat(16)}`;
const AUTH_TOKEN = 'tw-erasure-token-29';

let stack: Stack;
let first: Tenant;
let second: Tenant;
const [person, bystander] = numbers(2) as [string, string];
const digits = person.slice(1);
/** The batches of each tenant, whose reports must not move. */
const batches = new Map<number, number[]>();

const bearer = (tenant: Tenant, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${tenant.token}`,
  ...extra,
});

async function erase(options: Options) {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === 'recipient erase');
  if (!command) throw new Error('no command recipient erase');
  return runAsOperator(stack.admin, command, options);
}

async function sendSms(tenant: Tenant, body: Record<string, unknown>, key = randomUUID()) {
  const response = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: bearer(tenant, { 'idempotency-key': key }),
    payload: body,
  });
  expect(response.statusCode, response.body).toBe(202);
  return response.json().data.message.id as number;
}

/** A reply from `from`, as Twilio posts it to the workspace's inbound webhook. */
async function reply(tenant: Tenant, from: string, body: string, sid = `SM${'2'.repeat(32)}`) {
  const url = `/webhooks/inbound/${tenant.slug}/tw-in`;
  const params = {
    MessageSid: sid,
    AccountSid: ACCOUNT_SID,
    From: from,
    To: '+15005550006',
    Body: body,
    NumMedia: '0',
  };
  const response = await stack.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signTwilio(AUTH_TOKEN, `http://herald.test${url}`, params),
    },
    payload: new URLSearchParams(params).toString(),
  });
  expect(response.statusCode).toBe(204);
}

/** Everything Herald keeps about `person` in the tenant, made through its real doors. */
async function seed(tenant: Tenant) {
  await addCredits(stack.sql, tenant.workspaceId, 20);
  await providerCreate(stack.admin, {
    workspace: tenant.slug,
    slug: 'tw-in',
    type: 'twilio',
    'account-sid': ACCOUNT_SID,
    'auth-token': AUTH_TOKEN,
    from: '+15005550006',
  });
  // Its events are what matters here, written to the outbox whether or not they get delivered.
  const privateUrls = {
    ...stack.admin,
    env: { ...stack.admin.env, WEBHOOK_ALLOW_PRIVATE_URLS: true },
  };
  await webhookCreate(privateUrls, {
    workspace: tenant.slug,
    url: 'http://127.0.0.1:9/herald',
    events: 'all',
  });
  const marketing = await sendSms(tenant, {
    recipients: [person, bystander],
    message: 'Spring sale {opt_out_url}',
    message_purpose: 'marketing',
  });
  const transactional = await sendSms(tenant, { recipients: [person], message: 'Order shipped' });
  const otp = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/otp/send',
    headers: bearer(tenant, { 'idempotency-key': randomUUID() }),
    payload: { recipient: person, purpose: 'login' },
  });
  expect(otp.statusCode, otp.body).toBe(202);
  const wrong = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/otp/verify',
    headers: bearer(tenant),
    payload: { recipient: person, code: '000000', purpose: 'login' },
  });
  expect(wrong.statusCode).toBe(422);
  await reply(tenant, person, 'STOP');
  // A reply kept for the workspace's Inbox, quoting the bystander's number too.
  await reply(tenant, person, `Also text my wife on ${bystander}`, `SM${'3'.repeat(32)}`);
  // An entry that quotes the number, as a note an operator typed might.
  await recordAudit(stack, {
    workspaceId: tenant.workspaceId,
    userId: null,
    actor: 'operator',
    source: 'cli',
    action: 'note',
    target: `recipient ${person}`,
    details: { number: digits },
    address: null,
    userAgent: null,
  });
  for (const id of [marketing, transactional]) await waitForCompletion(stack, tenant.token, id);
  // Receipts go to PUBLIC_URL, which no one serves here: once completed, no figure moves.
  batches.set(tenant.workspaceId, [marketing, transactional]);
}

const NOW = new Date();
const reportsOf = (tenant: Tenant) =>
  everyReport(stack, tenant, batches.get(tenant.workspaceId) ?? [], NOW);

async function optOutsOf(tenant: Tenant) {
  return stack.sql`
    select recipient, source from opt_outs where workspace_id = ${tenant.workspaceId}
    order by recipient`;
}

let reportsBefore: [unknown, unknown];

beforeAll(async () => {
  stack = await openStack();
  first = await createTenant(stack.admin);
  second = await createTenant(stack.admin);
});

afterAll(() => stack?.close());

describe('herald recipient erase', () => {
  it('finds the number, before, in every place Herald keeps one', {
    timeout: 120_000,
  }, async () => {
    await Promise.all([seed(first), seed(second)]);
    reportsBefore = [await reportsOf(first), await reportsOf(second)];
    // Stored responses never quote a recipient; the idempotency records are found by their
    // resource instead (their request hash is a plain SHA-256 of a body holding the number).
    expect(Object.keys(await columnsHolding(stack, [digits]))).toEqual([
      'audit_log.details',
      'audit_log.target',
      'campaign_messages.recipient',
      'inbound_messages.from_number',
      'opt_out_links.recipient',
      'opt_outs.recipient',
      'otp_requests.recipient',
      'otp_verification_failures.recipient',
      'webhook_events.data',
    ]);
  });

  it('with --workspace, erases that workspace only and records it masked', async () => {
    const erased = await erase({ number: person, workspace: first.slug });
    expect(erased.json).toEqual({
      recipient: maskedNumber(person),
      workspace: first.slug,
      erased: true,
      campaign_messages: 2,
      otp_requests: 1,
      otp_verification_failures: 1,
      opt_outs_hashed: 1,
      opt_out_links: 1,
      webhook_events: expect.any(Number),
      inbound_messages: 1,
      idempotency_records: 3,
      audit_entries: 1,
      texts: 0,
    });
    expect(erased.human).toMatch(
      new RegExp(`^Erased ${maskedNumber(person)} from workspace ${first.slug}:\n`),
    );
    const [held] = await stack.sql<{ first: number; second: number }[]>`
      select count(*) filter (where c.workspace_id = ${first.workspaceId})::int as first,
             count(*) filter (where c.workspace_id = ${second.workspaceId})::int as second
      from campaign_messages m join campaigns c on c.id = m.campaign_id
      where m.recipient = ${person}`;
    expect(held).toEqual({ first: 0, second: 2 });

    const [entry] = await stack.sql`
      select actor, source, action, target, details, origin from audit_log
      where workspace_id = ${first.workspaceId} and action = 'recipient.erased'`;
    expect(entry).toEqual({
      actor: userInfo().username,
      source: 'cli',
      action: 'recipient.erased',
      target: `recipient ${maskedNumber(person)}`,
      details: {
        campaign_messages: 2,
        otp_requests: 1,
        otp_verification_failures: 1,
        opt_outs_hashed: 1,
        opt_out_links: 1,
        webhook_events: (erased.json as { webhook_events: number }).webhook_events,
        inbound_messages: 1,
        idempotency_records: 3,
        audit_entries: 1,
      },
      origin: `cli@${hostname()}`,
    });
  });

  it('without --workspace, leaves no table holding the number, and every report as it was', async () => {
    const erased = await erase({ number: person });
    expect(erased.json).toMatchObject({ workspace: null, erased: true, campaign_messages: 2 });
    expect(await columnsHolding(stack, [person, digits])).toEqual({});
    expect([await reportsOf(first), await reportsOf(second)]).toEqual(reportsBefore);
    // The bystander of the same send is untouched.
    expect(await columnsHolding(stack, [bystander])).toMatchObject({
      'campaign_messages.recipient': 2,
      'opt_out_links.recipient': 2,
    });
  });

  it('keeps the opt-out as a keyed hash, so a later marketing send still leaves the number out', async () => {
    expect(await optOutsOf(first)).toEqual([
      { recipient: erasedRecipient(secret, person), source: 'reply' },
    ]);
    const [later] = numbers(1) as [string];
    const response = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: bearer(first),
      payload: {
        recipients: [person, later],
        message: 'Summer sale',
        message_purpose: 'marketing',
      },
    });
    expect(response.statusCode).toBe(202);
    expect(response.json().data.queue).toMatchObject({
      requested_recipients: 2,
      excluded_recipients: 1,
    });
    const id = response.json().data.message.id as number;
    const rows = await stack.sql`
      select recipient from campaign_messages where campaign_id = ${id} order by seq`;
    expect(rows).toEqual([{ recipient: later }]);
    // A transactional message is not a marketing one: the opt-out does not stop it.
    const notice = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: bearer(first),
      payload: { recipients: [person], message: 'Your order shipped' },
    });
    expect(notice.json().data.queue).toMatchObject({
      requested_recipients: 1,
      excluded_recipients: 0,
    });
  });

  it('a second erase changes nothing and says so, recording nothing', async () => {
    // The transactional notice just sent holds the number again; erase it first.
    await erase({ number: person, workspace: first.slug });
    const entries = async () =>
      (await stack.sql`select id from audit_log where action = 'recipient.erased'`).length;
    const before = await entries();
    const again = await erase({ number: person, workspace: first.slug });
    expect(again.json).toEqual({
      recipient: maskedNumber(person),
      workspace: first.slug,
      erased: false,
      campaign_messages: 0,
      otp_requests: 0,
      otp_verification_failures: 0,
      opt_outs_hashed: 0,
      opt_out_links: 0,
      webhook_events: 0,
      inbound_messages: 0,
      idempotency_records: 0,
      audit_entries: 0,
      texts: 0,
    });
    expect(again.human).toBe(
      `Nothing to erase: workspace ${first.slug} holds no ${maskedNumber(person)} (already erased, or never held); nothing was changed`,
    );
    expect(await entries()).toBe(before);
    expect(await optOutsOf(first)).toEqual([
      { recipient: erasedRecipient(secret, person), source: 'reply' },
    ]);
  });

  it('lets a START reply from the erased number lift its hashed opt-out', async () => {
    await reply(first, person, 'START');
    expect(await optOutsOf(first)).toEqual([]);
    expect(await optOutsOf(second)).toEqual([
      { recipient: erasedRecipient(secret, person), source: 'reply' },
    ]);
  });

  it('fails, never sends, a queued message of a campaign in flight whose number was erased', async () => {
    const [erasedBeforeDispatch, kept] = numbers(2) as [string, string];
    const id = await dispatchPrepared(
      stack,
      first.workspaceId,
      {
        body: 'Your code is ready',
        providerSlug: 'own',
        recipients: [erasedBeforeDispatch, kept],
        purpose: 'transactional',
      },
      () => erase({ number: erasedBeforeDispatch, workspace: first.slug }),
    );
    expect(await waitForCompletion(stack, first.token, id)).toMatchObject({
      sent_count: 1,
      failed_count: 1,
    });
    expect(
      await stack.sql`
        select recipient, status, error from campaign_messages where campaign_id = ${id} order by seq`,
    ).toEqual([
      {
        recipient: maskedNumber(erasedBeforeDispatch),
        status: 'failed',
        error: 'the recipient was erased after the send',
      },
      { recipient: kept, status: 'sent', error: null },
    ]);
    expect(await inbox(simulatorUrl, erasedBeforeDispatch)).toEqual([]);
    expect(await inbox(simulatorUrl, kept)).toHaveLength(1);
  });

  it('refuses a number not in E.164 form and an unknown workspace', async () => {
    await expect(erase({ number: '0412 345 678' })).rejects.toThrow(
      new UsageError('--number must be a phone number in E.164 form, like +61412345678'),
    );
    await expect(erase({ number: person, workspace: 'no-such-ws' })).rejects.toThrow(
      new UsageError('No workspace has the slug "no-such-ws"'),
    );
  });

  it('runs as `herald recipient erase --json` and says when nothing is left', async () => {
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: secret });
    const result = await runHeraldJson(['recipient', 'erase', '--number', person], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ recipient: maskedNumber(person), erased: false });
  });
});

describe("the console's erase form (Audit log)", () => {
  const PASSWORD = 'correct horse 26';

  async function member(tenant: Tenant, role: 'owner' | 'admin') {
    const email = `${role}-${randomUUID().slice(0, 8)}@${tenant.slug}.test`;
    await userCreate(stack.admin, { workspace: tenant.slug, email, password: PASSWORD, role });
    const browser = new ConsoleBrowser(stack.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    return { email, browser };
  }

  it('lets an owner erase a number from the workspace, recorded masked, with CSRF', async () => {
    const [number] = numbers(1) as [string];
    const sent = await sendSms(second, { recipients: [number], message: 'Your parcel is here' });
    await waitForCompletion(stack, second.token, sent);
    const { email, browser } = await member(second, 'owner');
    const auditPage = `/console/w/${second.slug}/audit`;
    const action = `${auditPage}/erase-recipient`;
    expect(visibleText((await browser.get(auditPage)).body)).toContain("Erase a person's number");

    const forged = await browser.post(action, { _csrf: null, number });
    expect(forged.status).toBe(403);
    expect(visibleText(forged.body)).toContain('its security token is missing or wrong');
    const invalid = await browser.post(action, { number: '0412 345 678' });
    expect(invalid.status).toBe(422);
    expect(visibleText(invalid.body)).toContain(
      'Number must be a phone number in E.164 form, like +61412345678',
    );
    expect(await columnsHolding(stack, [number])).toMatchObject({
      'campaign_messages.recipient': 1,
    });

    const erased = await browser.post(action, { number });
    expect(erased.status).toBe(303);
    expect(erased.location).toBe(`${auditPage}?done=erased`);
    expect(await columnsHolding(stack, [number.slice(1)])).toEqual({});
    const [entry] = await stack.sql`
      select actor, source, target, details from audit_log
      where workspace_id = ${second.workspaceId} and action = 'recipient.erased' and source = 'console'`;
    expect(entry).toEqual({
      actor: email,
      source: 'console',
      target: `recipient ${maskedNumber(number)}`,
      details: {
        campaign_messages: 1,
        idempotency_records: 1,
        webhook_events: expect.any(Number),
      },
    });
    const again = await browser.post(action, { number });
    expect(again.location).toBe(`${auditPage}?done=unchanged`);
    expect(visibleText((await browser.get(again.location as string)).body)).toContain(
      'Nothing to erase: this workspace holds that number nowhere',
    );
  });

  it('is not offered to an admin, and refuses one', async () => {
    const { browser } = await member(second, 'admin');
    const auditPage = `/console/w/${second.slug}/audit`;
    expect((await browser.get(auditPage)).body).not.toContain('erase-recipient');
    const refused = await browser.post(`${auditPage}/erase-recipient`, { number: person });
    expect(refused.status).toBe(403);
    expect(visibleText(refused.body)).toContain('This needs the owner role in this workspace.');
  });
});
