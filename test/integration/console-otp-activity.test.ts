/**
 * OTP activity (issue 31 item 4): exact figures from codes sent and verified through the real API
 * (Temporal, the simulator's phone), per purpose and filtered, the conversion rate, the latest
 * requests masked for a member without recipients.read, the chart drawn on the server, and the
 * dashboard's OTP block.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { addCredits } from '../../db/credits.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, visibleText } from '../support/console.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const PASSWORD = 'correct horse 1';
let stack: Stack;
let tenant: Tenant;
let numberSeed = Math.floor(Math.random() * 9_000_000);
/** A fresh mobile under +61458 (no other file reads these inboxes). */
const mobile = () => `+61458${String(1_000_000 + numberSeed++).slice(-6)}`;

function api(path: string, payload: object) {
  return stack.app.inject({
    method: 'POST',
    url: `/api/v1/otp/${path}`,
    headers: { authorization: `Bearer ${tenant.token}` },
    payload,
  });
}

async function sendCode(recipient: string, purpose: string): Promise<{ id: string; code: string }> {
  const sent = await api('send', { recipient, purpose });
  expect(sent.statusCode).toBe(202);
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(recipient)}`);
  const { messages } = (await response.json()) as { messages: { body: string }[] };
  const code = /(\d{6,8})/.exec(messages[0]?.body ?? '')?.[1] ?? '';
  return { id: sent.json().data.request_id, code };
}

async function console(role: 'owner' | 'developer' | 'viewer') {
  const email = `${role}-${randomBytes(3).toString('hex')}@${tenant.slug}.test`;
  await addUser(
    stack.admin,
    { workspace: tenant.slug, email, password: PASSWORD, role },
    TEST_OPERATOR,
  );
  const browser = new ConsoleBrowser(stack.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return browser;
}

const figure = (body: string, name: string) =>
  new RegExp(`data-figure="${name}">([^<]+)<`).exec(body)?.[1];

let verifiedNumber: string;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  await addCredits(stack.sql, tenant.workspaceId, 100);
  // login: one verified, one expired unverified, one with its attempts used up; signup: verified.
  verifiedNumber = mobile();
  const verified = await sendCode(verifiedNumber, 'login');
  expect(
    (await api('verify', { recipient: verifiedNumber, purpose: 'login', code: verified.code }))
      .statusCode,
  ).toBe(200);
  const expired = await sendCode(mobile(), 'login');
  // Its lifetime passes (the shortest a service allows is a minute): moved, not waited for.
  await stack.sql`update otp_requests set expires_at = now() - interval '1 second' where id = ${expired.id}`;
  const exhaustedNumber = mobile();
  const exhausted = await sendCode(exhaustedNumber, 'login');
  const wrong = exhausted.code === '000000' ? '111111' : '000000';
  for (let attempt = 0; attempt < 5; attempt += 1)
    expect(
      (await api('verify', { recipient: exhaustedNumber, purpose: 'login', code: wrong }))
        .statusCode,
    ).toBe(422);
  // The right code now is refused too: the attempts are used up.
  expect(
    (await api('verify', { recipient: exhaustedNumber, purpose: 'login', code: exhausted.code }))
      .statusCode,
  ).toBe(422);
  const signupNumber = mobile();
  const signup = await sendCode(signupNumber, 'signup');
  expect(
    (await api('verify', { recipient: signupNumber, purpose: 'signup', code: signup.code }))
      .statusCode,
  ).toBe(200);
});

afterAll(() => stack.close());

describe('OTP activity', () => {
  it('counts sends by outcome, verified, expired, exhausted and the conversion, per purpose', async () => {
    const owner = await console('owner');
    const page = await owner.get(`/console/w/${tenant.slug}/otp-activity`);
    expect(page.status).toBe(200);
    expect(figure(page.body, 'sent')).toBe('4');
    expect(figure(page.body, 'verified')).toBe('2');
    expect(figure(page.body, 'expired')).toBe('1');
    expect(figure(page.body, 'exhausted')).toBe('1');
    expect(figure(page.body, 'conversion')).toBe('50%');
    const groups = /<table id="otp-groups">[\s\S]*?<\/table>/.exec(page.body)?.[0] ?? '';
    // Service, purpose, sent, accepted, pending, failed, verified, expired, exhausted, conversion.
    expect(visibleText(groups)).toContain('No service login 3 3 0 0 1 1 1 33.3%');
    expect(visibleText(groups)).toContain('No service signup 1 1 0 0 1 0 0 100%');
    // The owner reads numbers in full.
    expect(page.body).toContain(verifiedNumber);
    expect(page.body).toMatch(/<svg class="otp-chart"[\s\S]*?<rect class="otp-verified"/);
    expect(page.body).not.toMatch(/style="/);

    const signup = await owner.get(`/console/w/${tenant.slug}/otp-activity?purpose=signup`);
    expect(figure(signup.body, 'sent')).toBe('1');
    expect(figure(signup.body, 'conversion')).toBe('100%');
    const latest = /<table id="otp-latest">[\s\S]*?<\/table>/.exec(signup.body)?.[0] ?? '';
    expect(latest.match(/<tr>/g)?.length).toBe(2);
  });

  it('masks numbers for a member without recipients.read', async () => {
    const developer = await console('developer');
    const page = await developer.get(`/console/w/${tenant.slug}/otp-activity`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(verifiedNumber);
    expect(page.body).toContain(`•••• ${verifiedNumber.slice(-4)}`);
  });

  it('shows the OTP block on the dashboard, to a viewer too', async () => {
    const viewer = await console('viewer');
    const dashboard = await viewer.get(`/console/w/${tenant.slug}`);
    expect(dashboard.status).toBe(200);
    const block =
      /<div class="card" id="otp-summary">[\s\S]*?(?=<h2>Recent batches)/.exec(
        dashboard.body,
      )?.[0] ?? '';
    expect(visibleText(block)).toContain('Codes sent 4');
    expect(visibleText(block)).toContain('Verified 2 50% conversion');
    // A viewer may not open the activity page: no link to it.
    expect(block).not.toContain('/otp-activity');
    expect((await viewer.get(`/console/w/${tenant.slug}/otp-activity`)).status).toBe(403);
  });
});
