/**
 * What a person reads when a console form is refused: every refusal at once, each under its
 * field (the OTP service form showed one per submit), and a recipient by its 1-based line on
 * Create campaign as on Quick Send (it said `recipients.1`, counted from 0).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
let browser: ConsoleBrowser;
let slug: string;

beforeAll(async () => {
  server = await openConsoleApp();
  slug = `f-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: 'Form errors', slug }, TEST_OPERATOR);
  const email = `owner@${slug}.test`;
  await addUser(
    server.deps,
    { workspace: slug, email, password: 'a long owner password', role: 'owner' },
    TEST_OPERATOR,
  );
  browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, 'a long owner password')).status).toBe(303);
});
afterAll(async () => {
  await server.close();
});

/** The inline errors of a page, in page order. */
const fieldErrors = (html: string) =>
  [...html.matchAll(/<div class="field-error">([^<]*)<\/div>/g)].map(([, text]) => text);

/** The page's error alerts, in page order. */
const alerts = (html: string) =>
  [...html.matchAll(/<div class="alert error" role="alert">([^<]*)<\/div>/g)].map(
    ([, text]) => text,
  );

describe('console form errors', () => {
  it('the OTP service form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/otp-services`);
    const refused = await browser.post(`/console/w/${slug}/otp-services`, {
      name: ' ',
      purpose: 'log in!',
      code_length: '3',
      expires_in_minutes: '0',
      template: '',
      message_template: '',
      sender_id: 'NoSuchSender',
      provider: '',
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'Name is required',
      'Purpose &quot;log in!&quot; must be up to 100 letters, digits, &quot;.&quot;, &quot;_&quot;, &quot;:&quot; or &quot;-&quot;',
      'Code length must be an integer from 6 to 8',
      'Lifetime must be an integer from 1 to 10',
      `Sender id: &quot;NoSuchSender&quot; is not an approved sender of provider own in ${slug}`,
    ]);
    const [row] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from otp_services s join workspaces w on w.id = s.workspace_id
      where w.slug = ${slug}`;
    expect(row?.count).toBe(0);
  });

  it('the API key form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/developer/api-keys`);
    const refused = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Reports',
      abilities: 'messages:burn',
      routing: 'provider:nowhere',
      rate: 'fast',
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'Abilities must be a comma-separated list of messages:send, messages:read, otp:send, otp:verify, recipients:read (unknown: messages:burn)',
      `Direct provider &quot;nowhere&quot; is not a provider of ${slug}`,
      'Rate limit &quot;fast&quot; must be requests per second or minute, like 100/s or 6000/m, off, or default',
    ]);
  });

  it('the webhook form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/developer/webhooks`);
    const refused = await browser.post(`/console/w/${slug}/developer/webhooks`, {
      url: 'not a url',
      events: [],
      description: 'd'.repeat(501),
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'URL &quot;not a url&quot; is not an http(s) URL',
      'Events must list at least one event',
      'Description must be at most 500 characters',
    ]);
  });

  it('the invitation form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/team`);
    const refused = await browser.post(`/console/w/${slug}/team/invitations`, {
      email: 'nobody',
      role: 'emperor',
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'Email &quot;nobody&quot; is not an email address',
      'Role must be one of owner, admin, developer, viewer',
    ]);
    expect(alerts(refused.body)).toEqual([]);
  });

  it('the fraud guard form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/fraud-guard`);
    const refused = await browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_per_recipient: 'lots',
      otp_countries: 'Narnia',
      cap_near_percent: '200',
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'OTP per recipient &quot;lots&quot; must be sends per window, like 5/15m,10/24h, or off, or inherit',
      'OTP countries &quot;Narnia&quot; must be ISO 3166 alpha-2 country codes (AU,NZ) or any, or inherit',
      'Cap-near percent &quot;200&quot; must be a percentage from 1 to 100, or inherit',
    ]);
  });

  it('the OTP template form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/otp-templates`);
    const refused = await browser.post(`/console/w/${slug}/otp-templates`, {
      slug: 'Bad Slug',
      name: 'n'.repeat(201),
      body: '',
      purpose: 'gossip',
      enabled: 'on',
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'Slug &quot;Bad Slug&quot; must be lowercase letters, digits, - or _ (at most 63)',
      'Name must be at most 200 characters',
      'Text is required',
      'Purpose must be one of transactional, marketing',
    ]);
  });

  it('the OTP sender form shows every refusal at once, each under its field', async () => {
    await browser.get(`/console/w/${slug}/otp-senders`);
    const refused = await browser.post(`/console/w/${slug}/otp-senders`, {
      provider: 'nowhere',
      sender: 'S'.repeat(51),
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'Sender id must be at most 50 characters',
      `Provider &quot;nowhere&quot; is not a provider of ${slug}`,
    ]);
  });

  it('Create campaign names a bad recipient by its line, counted from 1 as Quick Send does', async () => {
    const good = `+6143${String(randomInt(10_000_000)).padStart(7, '0')}`;
    await browser.get(`/console/w/${slug}/campaigns/new`);
    const refused = await browser.post(`/console/w/${slug}/campaigns`, {
      name: 'Spring launch',
      recipients: `${good}\n0412`,
      message: 'Hello',
      purpose: 'transactional',
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused.body)).toEqual([
      'Line 2 of Recipients: the number must be a valid E.164 phone number.',
    ]);
  });
});
